"""Task sources: Harbor task folders, safely frozen and fingerprinted."""

from ..errors import BadTaskUrl, GitFailed, UnsafeTree
from ._contract import MODEL_PATCH, VerifierContract, admit_contract, patch_paths
from ._deepswe import PAYLOAD as DEEPSWE_PAYLOAD
from ._harbor import CollectCommand, HarborTask, load_task, strip_canary, utf8_position
from ._import import detect_format, import_task
from ._owned import (
    TASK_OWNED_DIRS,
    TASK_OWNED_FILES,
    restore_removed,
    stripped_copy,
    task_owned_paths,
)
from ._registry import (
    HARBOR_REGISTRY,
    DatasetPin,
    choose_version,
    dataset_block,
    dataset_previews,
    parse_dataset_ref,
    parse_registry,
    read_dataset_pin,
    read_registry,
    resolve_dataset,
    select_dataset,
    write_dataset_pin,
)
from ._remote import TaskPin, browse, fetch_into_cache, read_pins, resolve_pins, write_pins
from ._settings import COMMON_SETTINGS, ignored_settings
from ._tree import TreeEntry, copy_tree, fingerprint, freeze_tree, scan_tree
from ._urls import parse_task_url, tasks_block

__all__ = [
    "detect_format",
    "import_task",
    "TASK_OWNED_DIRS",
    "TASK_OWNED_FILES",
    "restore_removed",
    "stripped_copy",
    "task_owned_paths",
    "HARBOR_REGISTRY",
    "DatasetPin",
    "choose_version",
    "dataset_block",
    "dataset_previews",
    "parse_dataset_ref",
    "parse_registry",
    "read_dataset_pin",
    "read_registry",
    "resolve_dataset",
    "select_dataset",
    "write_dataset_pin",
    "COMMON_SETTINGS",
    "DEEPSWE_PAYLOAD",
    "MODEL_PATCH",
    "BadTaskUrl",
    "CollectCommand",
    "GitFailed",
    "HarborTask",
    "TaskPin",
    "TreeEntry",
    "UnsafeTree",
    "VerifierContract",
    "admit_contract",
    "browse",
    "copy_tree",
    "fetch_into_cache",
    "fingerprint",
    "ignored_settings",
    "freeze_tree",
    "load_task",
    "parse_task_url",
    "patch_paths",
    "read_pins",
    "resolve_pins",
    "scan_tree",
    "strip_canary",
    "utf8_position",
    "tasks_block",
    "write_pins",
]
