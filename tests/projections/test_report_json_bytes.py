"""results.json's long row lists are encoded by msgspec with exactly json.dumps' bytes (issue 27, item 3).

:func:`pluginbench.projections._report._compact_rows` must give ``json.dumps(value,
sort_keys=True, ensure_ascii=False, allow_nan=False, separators=(",", ":"))`` byte for byte,
and refuse what it refuses, whatever the floats, strings and keys.
"""

from __future__ import annotations

import csv
import io
import json
import math
import random
import struct
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pluginbench.projections import _report_files as report


def dumps(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode()


TRICKY_FLOATS = [0.1, 1e-7, 1e16, 1e15, 9999999999999998.0, 1e17, 5e-324, -0.0, 0.0, 1.0, -1.0, 1e-4, 9.99e-5,
                 1e-5, -1e-5, 1.2e-05, 0.0001234, 1e22, 1e21, 1.7976931348623157e308, 2.2250738585072014e-308,
                 1 / 3, 2.5, 100.0, 123456789012345678.0, 2.0**53, 0.30000000000000004, 1e300, -1.5e-300]
TRICKY_STRINGS = ["", "é", "\u2028", "\u2029", "\x7f", "\x00", "\x1f", 'a"b\\c', "\t\n\r\b\f", "😀", "</script>",
                  "&<>'", "e-5", ":1e5,", ",0.00001]", "\ufeff", "\U0010ffff"]


def test_tricky_floats_strings_and_ints_have_json_dumps_bytes() -> None:
    """Floats with exponents or below 1e-4, signed zero, subnormals, big ints and awkward strings encode as json.dumps does."""
    ints = [0, -1, 2**53 + 1, 2**63, 2**64, -(2**63) - 1, 10**30, True, False, None]
    values: list[Any] = [*TRICKY_FLOATS, *(-x for x in TRICKY_FLOATS), *ints, *TRICKY_STRINGS]
    for v in values:
        assert report._compact_rows(v) == dumps(v), v
        assert report._compact_rows([{"value": v, "k": [v, {"x": v}]}]) == dumps([{"value": v, "k": [v, {"x": v}]}])
    assert report._compact_rows(values) == dumps(values)
    assert report._compact_rows({s: i for i, s in enumerate(TRICKY_STRINGS)}) == dumps(
        {s: i for i, s in enumerate(TRICKY_STRINGS)})


def test_random_floats_of_every_magnitude_have_json_dumps_bytes() -> None:
    """20,000 floats from random bit patterns (every exponent) and rounded to 3-6 digits encode as json.dumps does."""
    rng = random.Random(27)
    floats = [struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0] for _ in range(10_000)]
    floats += [round(rng.uniform(-1, 1) * 10 ** rng.randint(-12, 20), rng.randint(3, 6)) for _ in range(10_000)]
    finite = [x for x in floats if math.isfinite(x)]
    for start in range(0, len(finite), 50):
        batch = finite[start:start + 50]
        assert report._compact_rows(batch) == dumps(batch)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=100, deadline=None)
@given(json_values)
def test_any_json_value_has_json_dumps_bytes(value: Any) -> None:
    """Any nesting of dicts (string keys), lists, strings, ints and finite floats encodes as json.dumps does."""
    assert report._compact_rows(value) == dumps(value)


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, -math.nan])
def test_a_non_finite_float_is_refused_as_json_dumps_refuses_it(bad: float) -> None:
    """A NaN or infinity anywhere in the rows raises json.dumps' ValueError (msgspec alone would write null)."""
    with pytest.raises(ValueError, match="Out of range float values are not JSON compliant"):
        report._compact_rows([{"a": [1, {"b": bad}]}])


def test_a_non_string_key_is_written_as_json_dumps_writes_it() -> None:
    """Int keys are sorted and written as json.dumps does (msgspec's sorted order takes only string keys)."""
    value = [{10: "a", 9: "b", 2: {1.5: None}}]
    assert report._compact_rows(value) == dumps(value)


def test_write_json_of_tricky_rows_is_json_dumps_indented(monkeypatch: pytest.MonkeyPatch) -> None:
    """write_json of a long list and a long dict of rows holding tricky floats and strings is json.dumps' indented text."""
    monkeypatch.setattr(report, "_BATCH", 4)
    rows = [{"v": f, "s": TRICKY_STRINGS[i % len(TRICKY_STRINGS)], "m": {"z": [f], "a": None}}
            for i, f in enumerate(TRICKY_FLOATS)]
    doc = {"attempts": rows, "costs": {"attempts": {f"a{i}": r for i, r in enumerate(rows)}}, "x": 1e-7}
    out = io.StringIO()
    report.write_json(out, doc)
    assert out.getvalue() == json.dumps(doc, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


GOLDEN_JSON = Path(__file__).resolve().parents[1] / "data" / "report_golden" / "results.json"
CSV_TRICKY = ['a,b', 'say "hi"', "line\nbreak", "both,\"\n", "é😀", " spaced ", "", "'single'", "tab\there", "cr\r\n"]


def test_results_csv_quotes_every_field_as_csv_writer_does() -> None:
    """write_csv's rows, with commas, quotes, line breaks and non-ASCII in names, reasons, units and values, are csv.writer's bytes for the same cells."""
    doc = json.loads(GOLDEN_JSON.read_text())
    doc["run"]["name"] = "run, \"quoted\"\n"
    for i, r in enumerate(doc["attempts"]):
        tricky = CSV_TRICKY[i % len(CSV_TRICKY)]
        r["task"], r["outcome_reason"] = f"task{tricky}", tricky
        r["tokens"]["reason"] = tricky or None
        for m in r["measures"].values():
            m["reason"], m["unit"], m["language"], m["analyzer"] = tricky, tricky, tricky, f"{tricky}x"
        if r["measures"]:
            next(iter(r["measures"].values()))["value"] = tricky  # a value that is text
    out = io.StringIO()
    report.write_csv(out, doc)
    text = out.getvalue()
    rows = list(csv.reader(io.StringIO(text, newline="")))
    again = io.StringIO()
    csv.writer(again, lineterminator="\n").writerows(rows)
    assert again.getvalue() == text
    assert rows[0] == list(report.CSV_HEADER) and {r[0] for r in rows[1:]} == {doc["run"]["name"]}
    assert {r[10] for r in rows[1:]} >= {t for t in CSV_TRICKY if t}


def test_a_csv_field_is_quoted_as_csv_writer_quotes_it_in_a_row() -> None:
    """Each field's text (a lone carriage return included, which csv.reader cannot read back) is csv.writer's, between two other fields."""
    fields = report._CsvFields()
    for text in [*CSV_TRICKY, "cr\rhere", "\r", '"', ",", "\n", "x" * 3]:
        buf = io.StringIO()
        csv.writer(buf, lineterminator="\n").writerow(["a", text, "b"])
        assert f"a,{fields[text]},b\n" == buf.getvalue(), text
