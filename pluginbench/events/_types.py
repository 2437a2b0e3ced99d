"""Event types: one immutable msgspec struct per fact about a run.

The types live by family (``_types_base``: value types and the base; ``_types_run``: the run
lifecycle, preparation, report; ``_types_attempt``: attempts, source-only grades, the vanilla
cache; ``_types_review``: reviews, llm-check votes and measurement revisions); this module holds
the tagged union :data:`Event`, its codec and every type by name.

Every event carries ``seq`` (contiguous from 1), ``at`` (UTC ISO-8601 with
milliseconds, set by the writer) and ``v`` (the schema version of that event type).
The ``type`` tag names the fact in ``noun.past_participle`` form. Fields are only added
within a version; renaming or removing one bumps ``v`` and keeps a decoder for the old
shape. Values that were not measured are ``None`` beside a reason; never zero.
"""

from typing import Any, Union, get_args

import msgspec

from ._types_attempt import (
    AgentExited,
    AgentLaunched,
    AttemptCached,
    AttemptCompleted,
    AttemptDiscarded,
    AttemptGraded,
    AttemptInterrupted,
    AttemptReset,
    AttemptReused,
    AttemptStarted,
    MeasuresCollected,
    SourceOnlyGraded,
    SourceOnlySelected,
    SourceOnlyStarted,
    SubmissionCaptured,
    SubmissionMissing,
    VanillaCacheChecked,
)
from ._types_base import (
    CacheDecision,
    ChildModel,
    ClusterNode,
    Finding,
    FrozenPrice,
    Measure,
    ModelRecord,
    NotMeasured,
    ReadinessRow,
    ReviewerSpec,
    SlotPlan,
    StoppingSpec,
    Usage,
)
from ._types_review import (
    CheckVoteCast,
    CheckVoteDiscarded,
    CheckVoteStarted,
    MeasurementReadinessChecked,
    MeasurementRevisionFinished,
    MeasurementRevisionStarted,
    ReferenceMeasured,
    ReviewCompleted,
    ReviewFailed,
    ReviewRevisionFinished,
    ReviewRevisionStarted,
    ReviewStarted,
    RevisionMeasured,
)
from ._types_run import (
    ClusterChanged,
    CodingStarted,
    ExtensionRecorded,
    GenerationFailed,
    GenerationStarted,
    GuidanceGenerated,
    LogRepaired,
    PreparationStarted,
    ReadinessChecked,
    ReportBuilt,
    RunCreated,
    RunFailed,
    RunFinished,
    RunStarted,
    RunStopped,
    RunStopping,
    TaskPrepared,
    TreatmentFrozen,
)

__all__ = [
    "CheckVoteCast",
    "CheckVoteDiscarded",
    "CheckVoteStarted",
    "AgentExited",
    "AgentLaunched",
    "AttemptCached",
    "AttemptCompleted",
    "AttemptDiscarded",
    "AttemptGraded",
    "AttemptInterrupted",
    "AttemptReset",
    "AttemptReused",
    "AttemptStarted",
    "CacheDecision",
    "ChildModel",
    "ClusterChanged",
    "ClusterNode",
    "CodingStarted",
    "EVENT_TYPES",
    "Event",
    "ExtensionRecorded",
    "Finding",
    "FrozenPrice",
    "GenerationFailed",
    "GenerationStarted",
    "GuidanceGenerated",
    "LogRepaired",
    "Measure",
    "MeasurementReadinessChecked",
    "MeasurementRevisionFinished",
    "MeasurementRevisionStarted",
    "MeasuresCollected",
    "ModelRecord",
    "NotMeasured",
    "PreparationStarted",
    "ReadinessChecked",
    "ReadinessRow",
    "ReferenceMeasured",
    "ReportBuilt",
    "ReviewCompleted",
    "ReviewFailed",
    "ReviewRevisionFinished",
    "ReviewRevisionStarted",
    "ReviewStarted",
    "ReviewerSpec",
    "RevisionMeasured",
    "RunCreated",
    "RunFailed",
    "RunFinished",
    "RunStarted",
    "RunStopped",
    "RunStopping",
    "SlotPlan",
    "SourceOnlyGraded",
    "SourceOnlySelected",
    "SourceOnlyStarted",
    "StoppingSpec",
    "SubmissionCaptured",
    "SubmissionMissing",
    "TaskPrepared",
    "TreatmentFrozen",
    "Usage",
    "VanillaCacheChecked",
    "decode",
    "decode_many",
    "decoder",
    "encode",
    "event_index_table",
    "stamp",
    "type_name",
]

Event = Union[  # noqa: UP007 - a Union object, so EVENT_TYPES can list its members
    RunCreated,
    RunStarted,
    ClusterChanged,
    LogRepaired,
    RunStopping,
    RunStopped,
    RunFailed,
    RunFinished,
    PreparationStarted,
    TaskPrepared,
    TreatmentFrozen,
    ReadinessChecked,
    GenerationStarted,
    GuidanceGenerated,
    GenerationFailed,
    CodingStarted,
    AttemptStarted,
    AgentLaunched,
    AgentExited,
    SubmissionCaptured,
    SubmissionMissing,
    AttemptGraded,
    MeasuresCollected,
    AttemptCompleted,
    SourceOnlyStarted,
    SourceOnlyGraded,
    SourceOnlySelected,
    AttemptInterrupted,
    AttemptDiscarded,
    AttemptReset,
    VanillaCacheChecked,
    AttemptReused,
    AttemptCached,
    ReviewStarted,
    ReviewCompleted,
    ReviewFailed,
    ReviewRevisionStarted,
    ReviewRevisionFinished,
    MeasurementReadinessChecked,
    ReferenceMeasured,
    MeasurementRevisionStarted,
    RevisionMeasured,
    MeasurementRevisionFinished,
    CheckVoteStarted,
    CheckVoteCast,
    CheckVoteDiscarded,
    ExtensionRecorded,
    ReportBuilt,
]

EVENT_TYPES: tuple[type[Any], ...] = get_args(Event)

_encoder = msgspec.json.Encoder(order="deterministic")
#: built on first use (:func:`decoder`): resolving every event's field types costs a
#: process that only writes events (a new run, until its report) about 1.4 ms at start-up
_decoder: msgspec.json.Decoder[Event] | None = None


def decoder() -> msgspec.json.Decoder[Event]:
    """The decoder of every event type, built once per process on first call."""
    global _decoder
    if _decoder is None:
        _decoder = msgspec.json.Decoder(Event)
    return _decoder


def encode(event: Event) -> bytes:
    """One event as compact JSON, keys in a fixed order, without a newline."""
    return _encoder.encode(event)


def decode(line: bytes | str) -> Event:
    """Decode one line; raises :class:`msgspec.DecodeError` or ValidationError."""
    return (_decoder or decoder()).decode(line)


def decode_many(lines: list[bytes]) -> list[Event]:
    """Decode many lines in one loop (no call per line); raises like :func:`decode`."""
    decode_line = (_decoder or decoder()).decode
    return [decode_line(line) for line in lines]


def stamp(event: Event, *, seq: int, at: str) -> Event:
    """The same event with its log position and time filled in."""
    return msgspec.structs.replace(event, seq=seq, at=at)


def type_name(event: Event) -> str:
    return event.__struct_config__.tag  # type: ignore[return-value]  # msgspec types tags str | int | None; every event declares a str tag


#: each family module and what its events are about (docs/events.md's index)
_FAMILIES = {
    "_types_run": "run lifecycle, preparation, report",
    "_types_attempt": "attempts, source-only grades, vanilla cache",
    "_types_review": "reviews, llm-check votes, measurement revisions",
}


def event_index_table() -> str:
    """The markdown index of every event type, in union order: its tag, family, fields (beyond
    ``seq``, ``at``, ``v``) and the first sentence of its docstring (docs/events.md, generated)."""
    rows = ["| Type | Family | Fields | What it records |", "| --- | --- | --- | --- |"]
    for t in EVENT_TYPES:
        fields = ", ".join(f"`{f}`" for f in t.__struct_fields__ if f not in ("seq", "at", "v")) or "—"
        doc = " ".join((t.__doc__ or "").split())
        first = doc.split(". ")[0].rstrip(".") + "."
        family = _FAMILIES.get(t.__module__.rsplit(".", 1)[-1], t.__module__)
        rows.append(f"| `{t.__struct_config__.tag}` | {family} | {fields} | {first.replace('|', '/')} |")
    return "\n".join(rows) + "\n"
