"""`pluginbench tasks import`: OpenBench and Terminal-Bench 1 folders become Harbor folders that pass
readiness (oracle = 1, nop = 0), OpenBench's partial credit lands in reward.json, and bad input is refused."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from pluginbench.errors import TaskError
from pluginbench.tasks import import_task, load_task
from tests._prereq import require

DATA = Path(__file__).resolve().parents[1] / "data" / "imports"
OPENBENCH = DATA / "openbench" / "fix-median"
TB = DATA / "terminal-bench" / "hello-world"

pytestmark = pytest.mark.slow


def _import(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pluginbench", "tasks", "import", *args], capture_output=True,
                          text=True, timeout=600)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_openbench_import_passes_readiness_and_keeps_partial_credit(tmp_path: Path) -> None:
    """The OpenBench task imports into a Harbor folder whose oracle passes and nop fails (local sandbox); an
    unchanged tree grades reward 0 and the checker's SCORE: 0.5 as native grading in reward.json."""
    from pluginbench.actors._pipeline import grade_in_sandbox
    from pluginbench.environments import LocalEnvironment

    done = _import(str(OPENBENCH), "--output", str(tmp_path / "out"))
    assert done.returncode == 0, done.stdout + done.stderr
    dest = tmp_path / "out" / "fix-median"
    assert done.stdout.strip() == str(dest)
    assert "oracle ok" in done.stdout + done.stderr and "nop ok" in done.stdout + done.stderr
    assert sorted(p.name for p in dest.iterdir()) == ["PROVENANCE.md", "instruction.md", "solution", "task.toml",
                                                       "tests", "workspace"]
    assert "source fingerprint" in (dest / "PROVENANCE.md").read_text()
    task = load_task(dest, "fix-median")
    patch = tmp_path / "empty.patch"
    patch.write_text("")
    graded = await grade_in_sandbox(
        environment=LocalEnvironment(isolation="auto"), run_id="r", attempt_id="nop", task=task,
        starting_source=dest / "workspace", patch_path=patch, empty=True, out_dir=tmp_path / "grading", hidden=(),
    )
    assert (graded.outcome, graded.reward) == ("empty", 0.0)  # an empty patch that fails
    assert graded.native_grading == {"score": 0.5, "checker_exit": 1}


def test_terminal_bench_import_maps_settings_and_passes_readiness_on_docker(tmp_path: Path) -> None:
    """The Terminal-Bench 1 task becomes task.toml timeouts and metadata, environment/Dockerfile, tests/run-tests.sh
    behind test.sh, solution/solve.sh; the compose wiring is named as left out; on docker oracle = 1, nop = 0."""
    kind, dest = import_task(TB, tmp_path / "out")
    assert kind == "terminal-bench"
    toml = tomllib.loads((dest / "task.toml").read_text())
    assert toml["agent"]["timeout_sec"] == 360.0 and toml["verifier"]["timeout_sec"] == 60.0
    assert toml["metadata"]["difficulty"] == "easy" and toml["metadata"]["tags"] == ["file-operations"]
    assert (dest / "instruction.md").read_text() == 'Create a file called /app/hello.txt. Write "Hello, world!" to it.\n'
    assert (dest / "environment" / "Dockerfile").is_file() and (dest / "tests" / "run-tests.sh").is_file()
    assert not (dest / "environment" / "docker-compose.yaml").exists()
    assert "docker-compose.yaml" in (dest / "PROVENANCE.md").read_text().split("Left out:")[1]
    load_task(dest, "hello-world")
    require(shutil.which("docker") is not None and subprocess.run(["docker", "image", "inspect",
            "pluginbench/base:bookworm"], capture_output=True).returncode == 0, "docker with pluginbench/base:bookworm")
    shutil.rmtree(dest)
    done = _import(str(TB), "--output", str(tmp_path / "out"), "--backend", "docker")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "oracle ok" in done.stdout + done.stderr and "nop ok" in done.stdout + done.stderr


def _copy(src: Path, tmp: Path) -> Path:
    dest = tmp / "src" / src.name
    shutil.copytree(src, dest)
    return dest


@pytest.mark.parametrize(("base", "change", "field", "words"), [
    ("openbench", lambda d: (d / "checker.sh").unlink(), "(folder)", "neither an OpenBench task"),
    ("openbench", lambda d: (d / "workspace.toml").write_text("ref = 'main'\n"), "workspace.toml", "not imported"),
    ("openbench", lambda d: shutil.rmtree(d / "solution"), "solution", "no solution/"),
    ("openbench", lambda d: (d / "instruction.md").write_text("  \n"), "instruction.md", "empty"),
    ("terminal-bench", lambda d: (d / "task.yaml").write_text("instruction: 3\n"), "instruction", "no instruction"),
    ("terminal-bench", lambda d: (d / "task.yaml").write_text("instruction: x\nmax_test_timeout_sec: -1\n"),
     "max_test_timeout_sec", "positive number"),
    ("terminal-bench", lambda d: (d / "docker-compose.yaml").write_text("services: {client: {}, db: {}}\n"),
     "services", "only the single 'client' service"),
    ("terminal-bench", lambda d: ((d / "solution.sh").unlink(), (d / "solution.yaml").write_text("- ls\n")),
     "solution.yaml", "command list"),
    ("terminal-bench", lambda d: (d / "Dockerfile").unlink(), "Dockerfile", "no Dockerfile"),
])
def test_bad_sources_are_refused_naming_file_and_field_and_write_nothing(tmp_path: Path, base, change, field,
                                                                          words: str) -> None:
    """Missing checker, git-mode workspace, missing solution, empty instruction, bad task.yaml values, multi-service
    compose, solution.yaml and a missing Dockerfile are refused naming the file and field; the output stays empty."""
    src = _copy(OPENBENCH if base == "openbench" else TB, tmp_path)
    change(src)
    with pytest.raises(TaskError) as err:
        import_task(src, tmp_path / "out")
    assert err.value.field == field and words in err.value.message and err.value.file and err.value.fix
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_an_existing_output_is_refused_and_the_cli_exits_2(tmp_path: Path) -> None:
    """Importing onto an existing task folder exits 2 naming --output, with no traceback."""
    (tmp_path / "out" / "fix-median").mkdir(parents=True)
    done = _import(str(OPENBENCH), "--output", str(tmp_path / "out"), "--no-check")
    assert done.returncode == 2 and "--output" in done.stderr and "already exists" in done.stderr
    assert "Traceback" not in done.stderr


def test_an_output_inside_the_source_or_a_file_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    """--output inside the source folder (it wrote into the source) or naming a file (a traceback) is refused."""
    src = _copy(OPENBENCH, tmp_path)
    before = sorted(p.relative_to(src) for p in src.rglob("*"))
    a_file = tmp_path / "file.txt"
    a_file.write_text("x")
    for out, words in ((src, "inside the source"), (src / "workspace", "inside the source"), (a_file, "not a folder")):
        with pytest.raises(TaskError) as err:
            import_task(src, out)
        assert err.value.field == "--output" and words in err.value.message and err.value.fix
    assert sorted(p.relative_to(src) for p in src.rglob("*")) == before and a_file.read_text() == "x"
