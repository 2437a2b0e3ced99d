"""Task sources: Harbor task folders, safely frozen and fingerprinted."""

from ._contract import MODEL_PATCH, VerifierContract, admit_contract, patch_paths
from ._harbor import CollectCommand, HarborTask, load_task, strip_canary
from ._tree import TreeEntry, UnsafeTree, copy_tree, fingerprint, freeze_tree, scan_tree

__all__ = [
    "MODEL_PATCH",
    "VerifierContract",
    "admit_contract",
    "patch_paths",
    "CollectCommand",
    "HarborTask",
    "TreeEntry",
    "UnsafeTree",
    "copy_tree",
    "fingerprint",
    "freeze_tree",
    "load_task",
    "scan_tree",
    "strip_canary",
]
