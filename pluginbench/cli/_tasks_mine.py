"""``tasks mine``: Harbor tasks from a repository's own history (commits and merged pull requests).

Registered on the ``tasks`` group by importing this module (see ``cli/__init__.py``); the
work is :func:`pluginbench.actors.mine_history`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import anyio
import typer
from rich.markup import escape
from rich.table import Table

from ._common import console, err_console, errors_to_exit_codes, print_json
from ._tasks import tasks_app


@tasks_app.command("mine")
@errors_to_exit_codes
def mine_command(
    repo: Annotated[str, typer.Argument(
        help="The git repository to mine: a folder (a clone) or a git bundle file. It is cloned privately; "
             "nothing from it runs on this machine outside a sandbox.")],
    out: Annotated[Path, typer.Option(
        "--out", help="The new folder for the admitted task folders and mining.json (must not exist).")] = Path("mined-tasks"),
    since: Annotated[str | None, typer.Option(
        "--since", help="Only commits after this commit, tag or branch (first-parent history).")] = None,
    limit: Annotated[int | None, typer.Option(
        "--limit", min=1, help="Examine at most this many candidates: the newest ones.")] = None,
    backend: Annotated[Literal["local", "docker"], typer.Option(
        "--backend", help="Where the tests run: local (bubblewrap, default-deny, no network) or docker.")] = "local",
    image: Annotated[str | None, typer.Option(
        "--image", help="The task image (already on the Docker engine) with the project's tools; implies "
                        "--backend docker and becomes each task's environment.docker_image in task.toml.")] = None,
    language: Annotated[Literal["auto", "python", "go", "javascript", "rust"], typer.Option(
        "--language", help="The repository's language, whose tests grade the tasks; auto: a root go.mod is go, a root "
                           "Cargo.toml rust, a root package.json with more JS/TS than Python files javascript, "
                           "else python.")] = "auto",
    runner: Annotated[Literal["auto", "pytest", "unittest", "go", "node", "cargo"], typer.Option(
        "--runner", help="The test runner inside the sandbox; auto: the language's own (python: pytest when the "
                         "sandbox's python3 has it, else unittest; go: go test -json; javascript: node --test, TAP; "
                         "rust: cargo test). The image needs that toolchain and python3.")] = "auto",
    test_timeout: Annotated[int, typer.Option(
        "--test-timeout", min=10, help="Seconds one run of the test suite may take (each task's verifier.timeout_sec).")] = 300,
    mutants: Annotated[int, typer.Option(
        "--mutants", min=0, help="Also seed up to this many mutation-repair tasks at HEAD (for thin history): a "
                                 "comparison flip, boolean negation, and/or swap or off-by-one in a source line, kept "
                                 "only when some passing test fails with it.")] = 0,
    jobs: Annotated[int, typer.Option(
        "--jobs", min=1, help="Candidates examined at the same time (each already runs before and after side by "
                              "side, so one candidate uses two sandboxes).")] = 1,
    json_out: Annotated[bool, typer.Option("--json", help="Print the summary as JSON (what mining.json holds).")] = False,
) -> None:
    """Mine tasks from git history: commits and merged pull requests that change source and tests.

    Each first-parent commit (a merge commit counts as its merged pull request) that changes
    source files and adds or changes tests becomes a candidate: the parent commit is the starting
    source, the commit's test files are the hidden tests, its other changes the reference solution,
    its message the instruction (marked as a commit message). The suite runs twice before and twice
    after the change in the sandbox; tests that fail before and pass after are fail-to-pass, tests
    that pass in both are pass-to-pass. A candidate is admitted only when its finished task passes
    readiness (oracle 1, nop 0); every other candidate is listed with why (root_commit,
    no_test_change, no_source_change, tests_pass_before, tests_fail_after, flaky, readiness_failed,
    unusable_tree). With --mutants N, up to N mutation-repair tasks follow: HEAD with one seeded bug, the
    reverse change as the solution, HEAD's tests hidden, an instruction naming the failing tests (written by
    PluginBench, marked so); a seeded bug no test catches is rejected as not_red. The folder --out gets one
    Harbor task folder per admitted candidate and mining.json; use it as tasks.source. Exit 2 on bad input, before anything is written.
    """
    from ..actors import MinedCandidate, MineOptions, mine_history

    opts = MineOptions(repo=repo, out=out, since=since, limit=limit, backend="docker" if image else backend,
                       image=image, language=language, runner=runner, test_timeout=test_timeout, mutants=mutants, jobs=jobs)

    def progress(row: MinedCandidate) -> None:
        mark = "admitted" if row.admitted else f"rejected ({row.code})"
        err_console.print(f"{row.commit[:10]} {row.subject[:60]}: {mark}", markup=False, highlight=False)

    if not json_out:
        err_console.print(f"mining {repo} (tests run in the {opts.backend} sandbox, twice before and twice after "
                          "each change)…", markup=False, highlight=False)
    report = anyio.run(mine_history, opts, None if json_out else progress)
    if json_out:
        print_json(report)
        return
    table = Table(title=f"{report.examined} candidate(s) examined, {report.admitted} admitted "
                        f"in {report.seconds:.1f} s → {report.out}")
    for name in ("commit", "kind", "subject", "verdict", "f2p", "p2p", "task folder / why rejected"):
        table.add_column(name, justify="right" if name in ("f2p", "p2p") else "left",
                         no_wrap=name in ("commit", "kind", "verdict", "f2p", "p2p"), overflow="fold")
    for row in report.candidates:
        table.add_row(
            row.commit[:10], "mutant" if row.mutation else "merge (PR)" if row.merge else "commit", escape(row.subject[:50]),
            "[green]admitted[/]" if row.admitted else f"[red]{row.code}[/]",
            str(row.f2p) if row.admitted else "", str(row.p2p) if row.admitted else "",
            escape(row.task if row.admitted else row.reason or ""),
        )
    console.print(table)
