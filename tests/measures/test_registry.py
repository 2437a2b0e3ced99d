"""The measure registry: a measure registered from inside tests/ is validated in the config,
collected by the collector actor, written to results.json / results.csv / report.html,
and never reported as zero when its collector has no value."""

from __future__ import annotations

import csv
import hashlib
import io
import json
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest

from pluginbench import measures
from pluginbench.actors import create_run
from pluginbench.config import load
from pluginbench.errors import ConfigError
from pluginbench.events import Measure
from pluginbench.measures import CollectorInput, Column, MeasureSpec
from pluginbench.projections._results_schema import validate as validate_results
from tests.actors.test_supervisor import _drive
from tests.runs_helpers import write_config


class ToyScale(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    factor: int


SEEN: list[CollectorInput] = []


def _toy_collect(inp: CollectorInput) -> dict[str, Measure]:
    """Patch bytes times the configured factor, and a value it never has (unknown with a reason)."""
    SEEN.append(inp)
    factor = inp.settings["toy_scale"].factor if "toy_scale" in inp.settings else 1
    return {
        "toy_patch_bytes": Measure(value=len(inp.patch.encode()) * factor, unit="bytes"),
        "toy_unknowable": Measure(value=None, unit="widgets", status="unknown", reason="the toy never knows this"),
    }


TOY = MeasureSpec(
    name="toy",
    description="A toy measure registered by a test.",
    columns=(
        Column("toy_patch_bytes", "bytes", "toy bytes", "Bytes of the canonical patch times the factor.", "Toy bytes"),
        Column("toy_unknowable", "widgets", "toy ?", "A value the toy collector never knows."),
        Column("toy_forgotten", "widgets", "toy forgotten", "A column the toy collector forgets to return.",
               summary=False),
    ),
    observer_version="7",
    collect=_toy_collect,
    settings={"toy_scale": ToyScale},
)


async def _sandbox_collect(inp: CollectorInput) -> dict[str, Measure]:
    """An async collector that runs a command in a fresh sandbox of the task's starting point (as coverage
    will): the starting source is there, the submission is not applied, the hidden tests are absent."""
    assert inp.open_task_sandbox is not None
    async with inp.open_task_sandbox() as sb:
        listed = await sb.exec(["sh", "-c", "ls -A"], cwd=sb.paths.app, timeout=60)
    names = [n for n in listed.stdout.decode().split() if n != ".git"]
    return {"toy_sandbox_files": Measure(value=len(names), unit="files")}


SANDBOX_TOY = MeasureSpec(
    name="toy_sandbox", description="Files at the root of a fresh task sandbox.",
    columns=(Column("toy_sandbox_files", "files", "toy files", "Files in a fresh sandbox's workspace root."),),
    observer_version="1", collect=_sandbox_collect,
)


@pytest.fixture
def toy() -> Iterator[MeasureSpec]:
    SEEN.clear()
    with measures.registered(TOY) as spec, measures.registered(SANDBOX_TOY):
        yield spec


def test_registration_refuses_a_taken_name_or_column() -> None:
    """Two measures with one name, one column claimed twice, or a better direction that is neither lower nor higher
    are refused at registration."""
    with pytest.raises(measures.RegistryError, match="already registered"):
        measures.register(TOY._replace(name="lines"))
    with pytest.raises(measures.RegistryError, match="already belongs to 'lines'"):
        measures.register(TOY._replace(columns=(Column("source_lines_added", "lines", "x", "x"),)))
    with pytest.raises(measures.RegistryError, match="better='smaller'"):
        measures.register(TOY._replace(columns=(Column("toy_x", "x", "x", "x", better="smaller"),)))  # type: ignore[arg-type]
    assert "toy" not in measures.names()


def test_config_names_an_unregistered_measure_and_a_stray_setting(tmp_path: Path) -> None:
    """Without the registration `toy` is an unknown measurement; with it, a setting of an unselected
    measure, an unknown setting and a mistyped one are each refused naming the field."""
    with pytest.raises(ConfigError) as err:
        load(write_config(tmp_path, measurements=["tokens", "toy"]))
    assert err.value.field == "measurements[1]" and "toy" not in str(err.value.fix)
    with measures.registered(TOY):
        with pytest.raises(ConfigError) as err:
            load(write_config(tmp_path, measurement_settings={"toy_scale": {"factor": 2}}))
        assert err.value.field == "measurement_settings.toy_scale" and "add toy to measurements" in str(err.value.fix)
        with pytest.raises(ConfigError) as err:
            load(write_config(tmp_path, measurements=["toy"], measurement_settings={"toy_scal": {"factor": 2}}))
        assert err.value.field == "measurement_settings.toy_scal" and "toy_scale" in str(err.value.fix)
        with pytest.raises(ConfigError) as err:
            load(write_config(tmp_path, measurements=["toy"], measurement_settings={"toy_scale": {"factor": "x"}}))
        assert err.value.field == "measurement_settings.toy_scale.factor"
        assert load(write_config(tmp_path, measurements=["toy"], measurement_settings={"toy_scale": {"factor": 2}}))


def test_a_shared_setting_reaches_every_collector_and_is_type_checked(tmp_path: Path) -> None:
    """A shared measurement setting (no single measure owns it) is accepted with any selection, refused
    with the wrong type naming the field, and handed decoded to every collector with its own keys."""
    measures.register_general_setting("toy_scope", list[str])
    try:
        with measures.registered(TOY):
            with pytest.raises(ConfigError) as err:
                load(write_config(tmp_path, measurement_settings={"toy_scope": "src/"}))
            assert err.value.field == "measurement_settings.toy_scope"
            with pytest.raises(measures.RegistryError, match="shared measurement setting"):
                measures.register(SANDBOX_TOY._replace(name="other", columns=(), settings={"toy_scope": str}))
            ev = load(write_config(tmp_path, measurements=["toy"], measurement_settings={
                "toy_scope": ["src/"], "toy_scale": {"factor": 2}})).evaluation
            assert measures.settings_for(TOY, ev.measurement_settings) == {"toy_scope": ["src/"],
                                                                           "toy_scale": ToyScale(factor=2)}
    finally:
        measures.unregister_general_setting("toy_scope")


@pytest.mark.anyio
async def test_a_toy_measure_runs_through_a_whole_evaluation(tmp_path: Path, toy: MeasureSpec,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A measure registered from tests/ is collected for every submission with the frozen inputs the port
    promises, lands in results.json (values, per task × arm medians), results.csv and report.html, and a
    value it does not know, or forgets, is null with a reason in missing_values, never 0."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    config = write_config(tmp_path, harness="oracle", tasks=["roman-numerals"], repeats=1, jobs=1,
                          environment={"isolation": "none"}, measurements=["tokens", "time", "lines", "toy", "toy_sandbox"],
                          measurement_settings={"toy_scale": {"factor": 3}})
    rd = create_run(load(config), tmp_path / "run")
    state = await _drive(rd.root)
    assert state.finished  # type: ignore[attr-defined]

    doc = json.loads((rd.report_dir / "results.json").read_text())
    validate_results(doc)  # the schema knows the registered measure's medians
    assert len(doc["attempts"]) == 2 and len(SEEN) == 2
    for row in doc["attempts"]:
        patch = (rd.root / row["evidence"] / "model.patch").read_bytes()
        assert patch, "the oracle applies the reference solution"
        assert row["measures"]["toy_patch_bytes"] == {"value": len(patch) * 3, "unit": "bytes",
                                                     "status": "measured", "reason": None}
        assert row["measures"]["toy_unknowable"]["value"] is None
        assert row["measures"]["toy_forgotten"] == {"value": None, "unit": "widgets", "status": "unknown",
                                                   "reason": "the toy collector returned no value for it"}
        assert "source_lines_added" in row["measures"]  # the built-in measure still runs beside it
        fields = {m["field"] for m in doc["missing_values"] if m["attempt_id"] == row["attempt_id"]}
        assert {"measures.toy_unknowable", "measures.toy_forgotten"} <= fields
    for arm, summary in doc["per_task"]["roman-numerals"].items():
        rows = [r for r in doc["attempts"] if r["arm"] == arm]
        assert summary["median_toy_patch_bytes"] == rows[0]["measures"]["toy_patch_bytes"]["value"]
        assert summary["median_toy_unknowable"] is None
        assert "median_toy_forgotten" not in summary

    starting = sorted(p.name for p in SEEN[0].starting_source.iterdir())
    assert all(r["measures"]["toy_sandbox_files"]["value"] == len(starting) for r in doc["attempts"]), starting

    inp = SEEN[0]
    assert inp.starting_source.is_dir() and (inp.task_dir / "instruction.md").is_file()
    assert hashlib.sha256(inp.patch.encode()).hexdigest() == state.attempts[inp.attempt_id].patch_sha256  # type: ignore[attr-defined]
    assert inp.harness == "oracle" and inp.task == "roman-numerals" and inp.arm in ("vanilla", "testing-discipline")
    assert inp.reference_patch is None or inp.reference_patch.startswith("diff")
    assert inp.work_dir == rd.attempt(inp.attempt_id) / "measure" / "toy"

    rows = list(csv.DictReader(io.StringIO((rd.report_dir / "results.csv").read_text())))
    toy_rows = [r for r in rows if r["measure"] == "measures.toy_patch_bytes"]
    assert len(toy_rows) == 2 and all(r["unit"] == "bytes" and int(r["value"]) > 0 for r in toy_rows)
    html = (rd.report_dir / "report.html").read_text()
    assert "Toy bytes" in html  # the attempt table's header
    quality = html.split('id="code-quality-table"')[1].split("</table>")[0]  # a new measure is a code measure
    assert 'data-metric="toy_patch_bytes" data-group="any|toy observer 7"' in quality


def test_without_the_registration_the_report_shows_no_toy_column() -> None:
    """The report's columns come from the registry: a measure that is not registered has none."""
    assert "toy" not in measures.names()
    assert all(not c.metric.startswith("toy") for c in measures.all_columns())
