"""Measures: small collectors, each returning a value or an explicit unknown with a reason.

The measure port (``_port.py``) and its registry (``_registry.py``): a measure declares
its name, columns, languages, observer version, settings schema and collector, and
registers once; the built-in ones are in ``_builtin.py``.
"""

from ..errors import RegistryError
from . import (
    _builtin,  # noqa: F401 - registers the built-in measures
    _quality,  # noqa: F401 - registers iterations, cyclomatic, cognitive, dead_code
)
from ._activation_spec import FIRST_TURN_PREFIX as ACTIVATION_FIRST_TURN_PREFIX
from ._activation_spec import PREFIX as ACTIVATION_PREFIX
from ._checks import Check, LlmCheck, field_named
from ._checks_llm import VoteAnswer, parse_vote
from ._checks_spec import GRADER_TOKENS as CHECK_GRADER_TOKENS
from ._checks_spec import PREFIX as CHECK_PREFIX
from ._checks_spec import TASK_CHECKS, task_checks
from ._coverage_changed import COVERAGE_METRICS, METRIC_UNITS, CoverageContext, changed_coverage
from ._coverage_data import CoverageReport
from ._coverage_profile import (
    CoverageProfile,
    MeasurementSettings,
    parse_profiles_mapping,
    resolve_profile,
    settings_of,
    validate_settings,
)
from ._coverage_run import OpenSandbox, coverage_readiness, run_coverage
from ._coverage_spec import task_language
from ._lines import LineCounts, count_lines, is_test_path
from ._observers import observer_refusal, observer_source, observer_sources
from ._port import (
    CollectorInput,
    Column,
    MeasureSpec,
    Readiness,
    ReadinessInput,
    ReadinessState,
)
from ._readiness import blocking, not_measured, warnings
from ._registry import (
    all_columns,
    collected_columns,
    collectors,
    default_selection,
    general_settings,
    get,
    measures,
    names,
    register,
    register_general_setting,
    registered,
    selected,
    settings_for,
    settings_owners,
    unregister,
    unregister_general_setting,
)
from ._source_only import FILTER_REVISION, filter_patch
from ._traces import SUBAGENT_TOOLS, unwrap_shell

__all__ = [
    "SUBAGENT_TOOLS",
    "unwrap_shell",
    "ACTIVATION_FIRST_TURN_PREFIX",
    "ACTIVATION_PREFIX",
    "CHECK_GRADER_TOKENS",
    "CHECK_PREFIX",
    "COVERAGE_METRICS",
    "Check",
    "FILTER_REVISION",
    "METRIC_UNITS",
    "TASK_CHECKS",
    "CollectorInput",
    "Column",
    "CoverageContext",
    "CoverageProfile",
    "CoverageReport",
    "LineCounts",
    "LlmCheck",
    "MeasureSpec",
    "MeasurementSettings",
    "OpenSandbox",
    "Readiness",
    "ReadinessInput",
    "ReadinessState",
    "RegistryError",
    "all_columns",
    "blocking",
    "changed_coverage",
    "collected_columns",
    "collectors",
    "count_lines",
    "coverage_readiness",
    "default_selection",
    "filter_patch",
    "general_settings",
    "get",
    "is_test_path",
    "measures",
    "names",
    "not_measured",
    "observer_refusal",
    "observer_source",
    "observer_sources",
    "parse_profiles_mapping",
    "register",
    "register_general_setting",
    "registered",
    "resolve_profile",
    "run_coverage",
    "selected",
    "settings_for",
    "settings_of",
    "settings_owners",
    "task_language",
    "unregister",
    "task_checks",
    "field_named",
    "unregister_general_setting",
    "validate_settings",
    "VoteAnswer",
    "parse_vote",
    "warnings",
]
