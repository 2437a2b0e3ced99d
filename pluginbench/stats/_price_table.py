"""The bundled, dated price table and the choice between it and a run's own ``prices.json``.

The package ships ``prices.json`` (list prices of the models the harnesses pin, each row's
source named in ``sources``; a model whose price could not be read, or cannot be applied to
an attempt's token totals, is left out so its dollars are unknown, never 0). A run's own
``prices.json`` overrides it whole. A table older than :data:`STALE_AFTER_DAYS` days at the
run's own recorded date (``run.created``'s timestamp, never the wall clock, so a report
rebuilds byte-identically) carries a warning beside every dollar.
"""

import datetime as _dt
import json
from importlib import resources
from typing import Literal

import msgspec

from ._cost import Prices, parse_prices

STALE_AFTER_DAYS = 90
BUNDLED_FILE = "pluginbench/stats/prices.json"


class PriceChoice(msgspec.Struct, frozen=True, kw_only=True):
    """Which table priced a run: ``run`` (its own prices.json), ``bundled`` (the package's)
    or ``none`` (an invalid run file: no dollars, ``reason`` says why)."""

    prices: Prices | None
    source: Literal["run", "bundled", "none"]
    file: str
    reason: str | None
    age_warning: str | None


def bundled_prices() -> Prices:
    """The package's price table, validated like a user's."""
    text = resources.files("pluginbench.stats").joinpath("prices.json").read_text(encoding="utf-8")
    return parse_prices(json.loads(text), BUNDLED_FILE)


def _date(text: str | None) -> _dt.date | None:
    if not text:
        return None
    try:
        return _dt.date.fromisoformat(text[:10])
    except ValueError:
        return None


def age_warning(as_of: str, run_date: str | None, source: str, stale_after_days: int = STALE_AFTER_DAYS) -> str | None:
    """A warning when the table dated ``as_of`` is more than ``stale_after_days`` older than
    ``run_date`` (an ISO timestamp or date recorded in the run), else ``None``. No run date
    (a run without ``run.created``) gives no warning: there is nothing to compare with."""
    table, run = _date(as_of), _date(run_date)
    if table is None or run is None:
        return None
    days = (run - table).days
    if days <= stale_after_days:
        return None
    fix = ("put a current prices.json beside evaluation.json (or set prices: in the config) and rebuild the report"
           if source == "bundled" else "update the run's prices.json and rebuild the report")
    return (f"the {source} price table is dated {as_of}, {days} days before this run ({run.isoformat()}); "
            f"list prices may have changed: {fix}")


def choose_prices(run_prices: Prices | None, run_reason: str | None, run_file_present: bool,
                  run_date: str | None) -> PriceChoice:
    """The run's own table when it has one; the bundled table when it has none; no table
    (with the run file's error) when its file is present but invalid — a broken file the
    user wrote is reported, never silently replaced."""
    if run_prices is not None:
        return PriceChoice(prices=run_prices, source="run", file="prices.json", reason=None,
                           age_warning=age_warning(run_prices.as_of, run_date, "run's"))
    if run_file_present:
        return PriceChoice(prices=None, source="none", file="prices.json", reason=run_reason, age_warning=None)
    table = bundled_prices()
    return PriceChoice(prices=table, source="bundled", file=BUNDLED_FILE, reason=None,
                       age_warning=age_warning(table.as_of, run_date, "bundled"))
