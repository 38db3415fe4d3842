"""Real-time priority reaches the processes it is asked for, once they have started, every thread of each, with
their memory locked: the virtual robot (``--priority``, as the graph's ``lowcmd_priority`` passes it) and a ROS node
of the graph (a node's ``priority``, passed by the runner in G1_TELEOP_SCHED_FIFO and applied by node_main once the
node is constructed). Without the right to it (no CAP_SYS_NICE), each says why in one line and runs on."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from g1_teleop.launching.graph_description import NodeSpec
from g1_teleop.launching.process_runner import GraphProcesses

pytestmark = pytest.mark.integration


def _priorities(pid: int) -> set[tuple[int, int]]:
    """(scheduling policy, priority) of every thread of a process."""
    out = set()
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            out.add((os.sched_getscheduler(int(tid)), os.sched_getparam(int(tid)).sched_priority))
        except ProcessLookupError:  # (a thread that ended meanwhile)
            continue
    return out


def _locked_kb(pid: int) -> int:
    """The process's locked memory (VmLck, kB)."""
    status = Path(f"/proc/{pid}/status").read_text().splitlines()
    line = next(line for line in status if line.startswith("VmLck:"))
    return int(line.split()[1])


def test_the_asked_priority_reaches_every_thread_once_started(ros_domain):
    nodes = [NodeSpec("tools.virtual_robot", "virtual_robot", True, {}, ros=False,
                      arguments=("--domain-id", str(ros_domain % 100 + 1), "--interface", "lo", "--gantry",
                                 "--priority", "20")),
             NodeSpec("robot_state", "robot_state", True, {}, priority=15)]
    lines: list[str] = []
    graph = GraphProcesses(nodes, output=lines.append)
    graph.start()
    try:
        deadline = time.monotonic() + 60.0
        while not (any("virtual_robot ready" in line for line in lines)
                   and any("frames rooted at pelvis" in line for line in lines)):
            assert graph.check() is None and time.monotonic() < deadline, "\n".join(lines[-20:])
            time.sleep(0.1)
        time.sleep(1.0)  # (robot_state applies it once constructed, just after its line)
        if os.geteuid() == 0:
            assert _priorities(graph.pid("virtual_robot")) == {(os.SCHED_FIFO, 20)}, "\n".join(lines[-20:])
            assert _priorities(graph.pid("robot_state")) == {(os.SCHED_FIFO, 15)}, "\n".join(lines[-20:])
            # mlockall: every mapping locked (the whole of each, MCL_ONFAULT: their pages once touched)
            assert min(_locked_kb(graph.pid(name)) for name in ("virtual_robot", "robot_state")) > 100_000
        else:
            assert sum("SCHED_FIFO" in line and "refused" in line for line in lines) == 2, "\n".join(lines[-20:])
            assert _priorities(graph.pid("robot_state")) == {(os.SCHED_OTHER, 0)}
        assert graph.check() is None
    finally:
        graph.stop()
