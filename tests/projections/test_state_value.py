"""A run state's value is its folded fields: the derived live index and source-only round
bookkeeping are neither compared nor shown."""

from __future__ import annotations

from pluginbench.projections import RunState


def test_states_equal_whether_or_not_the_index_was_built_and_repr_leaves_derived_fields_out() -> None:
    """Building one state's index (and its source-only round counter) changes neither its
    equality with an untouched state nor its repr; a folded field does."""
    built, untouched = RunState(), RunState()
    assert built.index is not None  # builds and keeps the index
    built._round_left = 3
    assert built == untouched
    assert repr(built) == repr(untouched)
    assert "_live_index" not in repr(built) and repr(built).startswith("RunState(created=None, attempts={}")
    untouched.repairs = 1
    assert built != untouched
    assert (built == object()) is False
