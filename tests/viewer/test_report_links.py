"""report.html's attempt links: inert in the file, made live only by the dashboard's rewrite of its own marker."""

from __future__ import annotations

import pytest

from pluginbench.projections import served_report
from pluginbench.projections._report_links import attempt_link, side_link, side_pairs


@pytest.mark.parametrize("html, served", [
    (attempt_link("t.vanilla.0", "<code>x</code>"),
     '<a class="pb-link" href="attempt/t.vanilla.0" data-href="attempt/t.vanilla.0"><code>x</code></a>'),
    (side_link("a b", "c/d", "r1"), '<a class="pb-link" href="side/a%20b/c%2Fd" data-href="side/a%20b/c%2Fd">r1</a>'),
    # not this module's marker, or a target it never writes: left alone
    ('<a class="pb-link" data-href="https://evil.example/">x</a>', None),
    ('<a class="pb-link" data-href="attempt/../../events.jsonl">x</a>', None),
    ('<a class="pb-link" data-href="attempt/..">x</a>', None),
    ('<a class="pb-link" data-href="side/x">x</a>', None),
    ('<a class="pb-link" data-href="attempt/x" onclick="alert(1)">x</a>',
     '<a class="pb-link" href="attempt/x" data-href="attempt/x" onclick="alert(1)">x</a>'),
    ('&lt;a class=&quot;pb-link&quot; data-href=&quot;attempt/x&quot;&gt;', None),
    ('<a class="pb-link" data-href="javascript:alert(1)">x</a>', None),
])
def test_only_the_marker_with_a_relative_attempt_or_side_target_becomes_a_link(html: str, served: str | None) -> None:
    """The served report gains an href exactly on the marker this module writes, with an attempt/ or side/ target of plain segments."""
    assert served_report(html.encode()).decode() == (html if served is None else served)


def test_an_id_holding_markup_or_dots_never_becomes_a_live_link() -> None:
    """An attempt id with quotes, markup or '..' is quoted or left inert: no injection, no traversal."""
    for bad in ('x"><script>alert(1)</script>', "..", "."):
        out = served_report(attempt_link(bad, "t").encode()).decode()
        assert "<script>" not in out and '"><' not in out.split(">", 1)[0]
        if bad in ("..", "."):
            assert " href=" not in out


def test_side_pairs_link_started_treatment_attempts_to_vanilla_of_the_same_repeat() -> None:
    """Per treatment arm, each started attempt pairs with the started vanilla attempt of its task and repeat (tasks in report order); pending attempts get no link."""
    rows = [{"task": "t", "arm": a, "repeat": r, "attempt_id": f"t.{a}.{r}", "state": s}
            for a, r, s in (("vanilla", 0, "complete"), ("vanilla", 1, "pending"), ("vanilla", 10, "complete"),
                            ("guided", 0, "complete"), ("guided", 1, "complete"), ("guided", 10, "complete"),
                            ("b", 0, "complete"))]
    rows += [{"task": "u", "arm": a, "repeat": 0, "attempt_id": f"u.{a}.0", "state": "complete"} for a in ("vanilla", "guided")]
    got = side_pairs({"arms": ["vanilla", "guided", "b"], "tasks": ["u", "t"], "attempts": rows})
    assert list(got) == ["guided", "b"]

    def targets(arm: str) -> list[str]:
        return [x.split('"', 1)[0] for x in got[arm].split('data-href="')[1:]]

    assert targets("guided") == ["side/u.vanilla.0/u.guided.0", "side/t.vanilla.0/t.guided.0", "side/t.vanilla.10/t.guided.10"]
    assert targets("b") == ["side/t.vanilla.0/t.b.0"]
