"""The evaluation config: schema, loading, validation and the ``init`` template."""

from importlib import resources

from ..harness_registry import SpecProblem
from ._capabilities import (
    ENFORCED,
    NOT_APPLICABLE,
    NOT_ENFORCED,
    capability_entry,
    capability_record,
    capability_record_of,
    not_applicable_policy,
)
from ._harnesses import for_harness, harness_entries, is_cross_agent, per_harness, under_harness
from ._load import (
    LoadedConfig,
    frozen_builtins,
    llm_check_problem,
    load,
    reviewer_spec_problem,
    to_builtins,
    validate,
)
from ._parse import parse_evaluation, safe_load_unique
from ._schema import (
    DEFAULT_GENERATE_INSTRUCTION,
    Capabilities,
    DatasetSource,
    EnvironmentConfig,
    Evaluation,
    Generate,
    GradingConfig,
    HarnessEntry,
    ReviewerConfig,
    RunnerConfig,
    TasksConfig,
    Treatment,
)


def template_text() -> str:
    """The commented starter config that ``pluginbench init`` writes."""
    return resources.files(__package__).joinpath("template.yaml").read_text(encoding="utf-8")


__all__ = [
    "HarnessEntry",
    "for_harness",
    "frozen_builtins",
    "harness_entries",
    "is_cross_agent",
    "per_harness",
    "under_harness",
    "llm_check_problem",
    "DatasetSource",
    "Capabilities",
    "DEFAULT_GENERATE_INSTRUCTION",
    "EnvironmentConfig",
    "Evaluation",
    "GradingConfig",
    "Generate",
    "LoadedConfig",
    "ReviewerConfig",
    "RunnerConfig",
    "SpecProblem",
    "TasksConfig",
    "Treatment",
    "ENFORCED",
    "NOT_APPLICABLE",
    "NOT_ENFORCED",
    "capability_entry",
    "capability_record",
    "capability_record_of",
    "load",
    "not_applicable_policy",
    "parse_evaluation",
    "reviewer_spec_problem",
    "safe_load_unique",
    "template_text",
    "to_builtins",
    "validate",
]
