"""Measures: small collectors, each returning a value or an explicit unknown with a reason.

The measure port (``_port.py``) and its registry (``_registry.py``): a measure declares
its name, columns, languages, observer version, settings schema and collector, and
registers once; the built-in ones are in ``_builtin.py``.
"""

from . import (
    _builtin,  # noqa: F401 - registers the built-in measures
    _quality,  # noqa: F401 - registers iterations, cyclomatic, cognitive, dead_code
)
from ._lines import LineCounts, count_lines, is_test_path
from ._port import (
    CollectorInput,
    Column,
    MeasureSpec,
    Readiness,
    ReadinessInput,
    ReadinessState,
)
from ._registry import (
    RegistryError,
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

__all__ = [
    "FILTER_REVISION",
    "CollectorInput",
    "Column",
    "LineCounts",
    "MeasureSpec",
    "Readiness",
    "ReadinessInput",
    "ReadinessState",
    "RegistryError",
    "all_columns",
    "collected_columns",
    "collectors",
    "count_lines",
    "default_selection",
    "filter_patch",
    "general_settings",
    "get",
    "is_test_path",
    "measures",
    "names",
    "register",
    "register_general_setting",
    "registered",
    "selected",
    "settings_for",
    "settings_owners",
    "unregister",
    "unregister_general_setting",
]
