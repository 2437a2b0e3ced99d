"""The vanilla cache: finished vanilla attempts shared by every output folder.

One cache root (``$XDG_CACHE_HOME/pluginbench`` or ``~/.cache/pluginbench``, resolved
before preparation) holds ``vanilla/<key>/<repeat>`` entries. :mod:`._key` computes the
key from everything the comparison binds (pure), :mod:`._admit` decides whether a saved
entry may stand in for a fresh attempt (pure), and :mod:`._store` is the file I/O at the
edge: root checks, reading an entry, publishing one atomically, importing one into a run.
"""

from ._admit import AttemptRecord, EntryManifest, admit, argv_matches
from ._key import COHORT_DIR, KeyInputs, cohort_of, entry_of, vanilla_key
from ._store import (
    CacheRefused,
    check_cache_root,
    check_output_outside,
    entry_files,
    import_entry,
    publish_entry,
    read_json,
    read_manifest,
    resolve_cache_root,
    vanilla_cache_enabled,
)

__all__ = [
    "COHORT_DIR",
    "AttemptRecord",
    "CacheRefused",
    "EntryManifest",
    "KeyInputs",
    "admit",
    "argv_matches",
    "check_cache_root",
    "check_output_outside",
    "cohort_of",
    "entry_files",
    "entry_of",
    "import_entry",
    "publish_entry",
    "read_json",
    "read_manifest",
    "resolve_cache_root",
    "vanilla_cache_enabled",
    "vanilla_key",
]
