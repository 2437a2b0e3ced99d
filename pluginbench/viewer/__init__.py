"""Looking inside attempts: the facts of one attempt (``pluginbench show``, the dashboard's
attempt page), its transcript as a timeline, its patch per file, two attempts side by side,
and a shareable scrubbed copy of a run (``pluginbench bundle``).

Layer: reads run folders (``rundir``, ``status``, the measures' trace reader); used by the
CLI and the dashboard. ``_evidence`` is the one way in to an attempt's files (no symlink,
nothing outside its folder); ``_transcript`` and ``_diff`` are pure; ``_facts`` gathers.
"""

from ..errors import BundleRefused
from ._bundle import (
    Bundle,
    extract_bundle,
    is_bundle,
    opened_run,
    remove_extracted,
    write_bundle,
)
from ._diff import PatchFile, divergence, patch_delta, split_patch
from ._evidence import attempt_dir, list_files, read_text, safe_file, valid_id
from ._facts import (
    SHOW_SCHEMA_VERSION,
    AttemptFacts,
    AttemptRow,
    Measure,
    Review,
    attempt_facts,
    attempt_rows,
    facts_json,
    load_timeline,
)
from ._transcript import (
    Retry,
    Step,
    Thread,
    Timeline,
    claude_timeline,
    codex_timeline,
    tool_sequence,
    totals,
)

__all__ = [
    "Bundle",
    "BundleRefused",
    "extract_bundle",
    "is_bundle",
    "opened_run",
    "remove_extracted",
    "write_bundle",
    "SHOW_SCHEMA_VERSION",
    "AttemptFacts",
    "AttemptRow",
    "Measure",
    "PatchFile",
    "Retry",
    "Review",
    "Step",
    "Thread",
    "Timeline",
    "attempt_dir",
    "attempt_facts",
    "attempt_rows",
    "claude_timeline",
    "codex_timeline",
    "divergence",
    "facts_json",
    "list_files",
    "load_timeline",
    "patch_delta",
    "read_text",
    "safe_file",
    "split_patch",
    "tool_sequence",
    "totals",
    "valid_id",
]
