"""The Supervisor's pure rules for a cluster: capacity is the nodes' jobs, and an attempt
whose worker node was lost is recoded in the same run (no cluster needed here)."""

from __future__ import annotations

from pluginbench.actors import Emit, schedule
from pluginbench.events import (
    AgentLaunched,
    AttemptDiscarded,
    AttemptInterrupted,
    AttemptReset,
    ClusterNode,
    CodingStarted,
    RunStarted,
    RunStopping,
)

from ..actors.test_decide import Run, created


def _cluster_run(jobs_per_node: tuple[int, ...] = (2, 1)) -> Run:
    nodes = [ClusterNode(name=f"n{i}", jobs=j) for i, j in enumerate(jobs_per_node)]
    run = Run(created(n_tasks=4, jobs=2), RunStarted(pid=1, pgid=1, resumed=False, nodes=nodes))
    run.apply(CodingStarted())
    return run


def test_a_cluster_codes_up_to_the_sum_of_its_nodes_jobs() -> None:
    """With nodes of 2 and 1 jobs, three attempts start at once although the evaluation's jobs is 2."""
    run = _cluster_run()
    assert run.state.coding_capacity == 3
    assert len(schedule(run.state)) == 3


def test_a_lost_node_discards_a_launched_attempt_and_replaces_it_in_run() -> None:
    """A launched attempt on a lost node is discarded with a replacement (~2) and the run goes on; nothing stops."""
    run = _cluster_run()
    run.start("t0__vanilla__r1")
    run.apply(AgentLaunched(attempt_id="t0__vanilla__r1", argv=["x"], node="n1"))
    commands = run.apply(AttemptInterrupted(attempt_id="t0__vanilla__r1", reason="worker node n1 was lost",
                                            worker_lost=True))
    assert len(commands) == 1 and isinstance(commands[0], Emit)
    discarded = commands[0].event
    assert isinstance(discarded, AttemptDiscarded)
    assert discarded.replaced_by == "t0__vanilla__r1~2" and "lost" in discarded.reason
    run.apply(discarded)
    assert not any(isinstance(getattr(c, "event", None), RunStopping) for c in commands)
    assert run.state.live[run.state.attempts["t0__vanilla__r1"].slot] == "t0__vanilla__r1~2"


def test_a_lost_node_before_launch_resets_the_attempt() -> None:
    """An attempt whose node was lost before its agent launched is reset, not discarded (nothing was paid)."""
    run = _cluster_run()
    run.start("t1__vanilla__r1")
    commands = run.apply(AttemptInterrupted(attempt_id="t1__vanilla__r1", reason="lost", worker_lost=True))
    assert [type(c.event) for c in commands] == [AttemptReset]


def test_a_slot_whose_paid_attempts_keep_being_lost_stops_the_run_at_the_limit() -> None:
    """Two lost paid attempts of a slot are replaced; the third stops the run (a failure naming the slot), is left
    interrupted for a resume to replace, and no fourth attempt starts: an agent that ends its own sandbox cannot
    make the run pay for its slot without end."""
    from pluginbench.actors._decide import LOSSES_PER_SLOT_LIMIT

    run = _cluster_run()
    aid = "t0__vanilla__r1"
    for n in range(1, LOSSES_PER_SLOT_LIMIT + 1):
        run.start(aid)
        run.apply(AgentLaunched(attempt_id=aid, argv=["x"], node="n1"))
        commands = run.apply(AttemptInterrupted(attempt_id=aid, reason="the coding sandbox ended under the agent",
                                                worker_lost=True))
        (command,) = commands
        assert isinstance(command, Emit)
        if n < LOSSES_PER_SLOT_LIMIT:
            assert isinstance(command.event, AttemptDiscarded)
            run.apply(command.event)
            aid = command.event.replaced_by
        else:
            assert isinstance(command.event, RunStopping) and command.event.failure
            assert f"3 paid attempts of task t0, arm vanilla, repeat 1 were lost in this run, the last {aid}: " \
                in command.event.reason
            assert "ended under the agent" in command.event.reason
    run.apply(command.event)
    assert aid == "t0__vanilla__r1~3" and run.state.attempts[aid].state == "interrupted"
    assert len(run.state.discarded) == LOSSES_PER_SLOT_LIMIT - 1
    assert not any(a.startswith("t0__vanilla__r1~4") for a in run.state.attempts)
