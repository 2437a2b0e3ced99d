"""Task sources: Harbor task folders, safely frozen and fingerprinted."""

from ..errors import BadTaskUrl, GitFailed, UnsafeTree
from ._contract import MODEL_PATCH, VerifierContract, admit_contract, patch_paths
from ._deepswe import PAYLOAD as DEEPSWE_PAYLOAD
from ._harbor import CollectCommand, HarborTask, load_task, strip_canary, utf8_position
from ._mine_git import Candidate, Change, MinedRepo, classify_path
from ._mine_mutate import (
    Mutation,
    apply_mutation,
    mutant_candidate,
    mutant_instruction,
    mutant_task_id,
    mutation_sites,
    reverse_patch,
)
from ._mine_task import (
    GRADER_SOURCE,
    SOLVE_SH,
    TEST_SH,
    RejectCode,
    Verdict,
    decide,
    grading_config,
    instruction_text,
    readme_text,
    reject,
    screen,
    task_id_of,
    task_toml,
)
from ._remote import TaskPin, browse, fetch_into_cache, read_pins, resolve_pins, write_pins
from ._settings import COMMON_SETTINGS, ignored_settings
from ._tree import TreeEntry, copy_tree, fingerprint, freeze_tree, scan_tree
from ._urls import parse_task_url, tasks_block

__all__ = [  # noqa: RUF022 - history mining's names are kept together at the end
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
    # history mining (tasks mine)
    "GRADER_SOURCE",
    "SOLVE_SH",
    "TEST_SH",
    "Candidate",
    "Change",
    "MinedRepo",
    "Mutation",
    "apply_mutation",
    "mutant_candidate",
    "mutant_instruction",
    "mutant_task_id",
    "mutation_sites",
    "reverse_patch",
    "RejectCode",
    "Verdict",
    "classify_path",
    "decide",
    "grading_config",
    "instruction_text",
    "readme_text",
    "reject",
    "screen",
    "task_id_of",
    "task_toml",
]
