"""The run's own price table: ``prices.json`` beside ``evaluation.json``, read once when a run
starts (its cost ceiling) and again by each report build (its dollars); apart from the report's
Cost section (``_report_cost``) so a run's start does not load the report's HTML helpers."""

import json
from pathlib import Path

from ..errors import InputError
from ..stats import PriceChoice, Prices, choose_prices, parse_prices

PRICES_FILE = "prices.json"


def load_prices(run_root: Path) -> tuple[Prices | None, str | None]:
    """The run's price table, or ``None`` and why (absent, or invalid with file, field and fix)."""
    path = run_root / PRICES_FILE
    if not path.is_file():
        return None, f"no {PRICES_FILE} beside evaluation.json: dollars are unknown"
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        return parse_prices(raw, PRICES_FILE), None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        return None, f"{PRICES_FILE} is not valid JSON ({exc}): dollars are unknown"
    except InputError as exc:
        return None, f"{PRICES_FILE} is invalid: {exc.message} (field {exc.field}; fix: {exc.fix})"


def report_prices(run_root: Path, run_date: str | None) -> PriceChoice:
    """The table that prices the run's report: its own prices.json, else the bundled table;
    ``run_date`` (run.created's timestamp) dates the age warning."""
    prices, reason = load_prices(run_root)
    return choose_prices(prices, reason, (run_root / PRICES_FILE).is_file(), run_date)
