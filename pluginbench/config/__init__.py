"""The evaluation config: schema, loading, validation and the ``init`` template."""

from importlib import resources

from ..harness_registry import SpecProblem
from ._capabilities import capability_record, capability_record_of, codex_settings
from ._load import (
    LoadedConfig,
    load,
    parse_evaluation,
    reviewer_spec_problem,
    to_builtins,
    validate,
)
from ._schema import (
    Capabilities,
    EnvironmentConfig,
    Evaluation,
    ReviewerConfig,
    RunnerConfig,
    TasksConfig,
    Treatment,
)


def template_text() -> str:
    """The commented starter config that ``pluginbench init`` writes."""
    return resources.files(__package__).joinpath("template.yaml").read_text(encoding="utf-8")


__all__ = [
    "Capabilities",
    "EnvironmentConfig",
    "Evaluation",
    "LoadedConfig",
    "ReviewerConfig",
    "RunnerConfig",
    "SpecProblem",
    "TasksConfig",
    "Treatment",
    "capability_record",
    "capability_record_of",
    "codex_settings",
    "load",
    "parse_evaluation",
    "reviewer_spec_problem",
    "template_text",
    "to_builtins",
    "validate",
]
