"""Task sources: Harbor task folders, safely frozen and fingerprinted."""

from typing import TYPE_CHECKING

from .._lazy import lazy
from ..errors import BadTaskUrl, GitFailed, UnsafeTree

if TYPE_CHECKING:
    from ._contract import MODEL_PATCH, VerifierContract, admit_contract, patch_paths
    from ._deepswe import PAYLOAD as DEEPSWE_PAYLOAD
    from ._harbor import CollectCommand, HarborTask, load_task, strip_canary, utf8_position
    from ._import import detect_format, import_task
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
        LANGUAGE_RUNNERS,
        SOLVE_SH,
        TEST_SH,
        Language,
        RejectCode,
        Verdict,
        decide,
        detect_language,
        grading_config,
        instruction_text,
        language_of_runner,
        other_js_runner,
        readme_text,
        reject,
        screen,
        task_id_of,
        task_toml,
    )
    from ._owned import (
        TASK_OWNED_DIRS,
        TASK_OWNED_FILES,
        bind_task_owned,
        owned_in_tree,
        removal_roots,
        restore_removed,
        stripped_copy,
        task_owned_paths,
    )
    from ._registry import (
        HARBOR_REGISTRY,
        PACKAGE_HUB,
        DatasetPin,
        choose_version,
        dataset_block,
        dataset_previews,
        package_hub_refusal,
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
    from ._verifier_env import (
        FROM_HOST_FIELD,
        VerifierEnv,
        check_allowed_names,
        resolve_verifier_env,
    )

__all__ = [  # noqa: RUF022 - history mining's names are kept together at the end
    "detect_format",
    "import_task",
    "TASK_OWNED_DIRS",
    "TASK_OWNED_FILES",
    "bind_task_owned",
    "owned_in_tree",
    "removal_roots",
    "restore_removed",
    "stripped_copy",
    "task_owned_paths",
    "HARBOR_REGISTRY",
    "PACKAGE_HUB",
    "DatasetPin",
    "choose_version",
    "dataset_block",
    "dataset_previews",
    "package_hub_refusal",
    "parse_dataset_ref",
    "parse_registry",
    "read_dataset_pin",
    "read_registry",
    "resolve_dataset",
    "select_dataset",
    "write_dataset_pin",
    "COMMON_SETTINGS",
    "FROM_HOST_FIELD",
    "VerifierEnv",
    "check_allowed_names",
    "resolve_verifier_env",
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
    "LANGUAGE_RUNNERS",
    "Language",
    "detect_language",
    "language_of_runner",
    "other_js_runner",
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

__getattr__ = lazy(__name__, __file__)
