"""Real-time priority and cores reach the processes they are asked for. Priority once they have started, for every
thread but the middleware's housekeeping ones (core/realtime_priority.py: they may busy-wait), with their memory
locked: the virtual robot (``--priority``, as the graph's ``lowcmd_priority`` passes it) and a ROS node of the graph
(a node's ``priority``, passed by the runner in G1_TELEOP_SCHED_FIFO and applied by node_main once the node is
constructed); without the right to it (no CAP_SYS_NICE), each says why in one line and runs on. Cores from the
start, for every thread: a node that keeps some (``cpus``, as the graphs' ``control_cpus`` give the command chain)
runs on them only and a process that names none (here the virtual robot) on the cores left only (the pip runner
starts each under ``taskset -c``)."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest

from g1_teleop.core.cpu_affinity import parse_cpu_list, usable_cpus
from g1_teleop.launching.graph_description import load_graph
from g1_teleop.launching.process_runner import GraphProcesses

pytestmark = pytest.mark.integration


# The middleware's housekeeping threads: Fast DDS's (asynchronous writers, events, type lookup, its shared memory's
# watchdog) and Cyclone DDS's (timed events, garbage collection, leases, discovery's delivery).
_HOUSEKEEPING_THREADS = ("dds.asyn.", "dds.ev.", "dds.tls.", "dds.shm.wdog", "tev", "gc", "lease", "dq.builtins")
# The middleware's receive threads: Fast DDS's (UDP, shared memory) and Cyclone DDS's (and its user data delivery).
_RECEIVE_THREADS = re.compile(r"dds\.(udp|shm)\.\d+|recv(UC|MC)?|dq\.user")


def _threads(pid: int) -> list[tuple[int, str, tuple[int, int]]]:
    """(id, name, (scheduling policy, priority)) of every thread of a process."""
    out = []
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            name = Path(f"/proc/{pid}/task/{tid}/comm").read_text().strip()
            out.append((int(tid), name, (os.sched_getscheduler(int(tid)), os.sched_getparam(int(tid)).sched_priority)))
        except (FileNotFoundError, ProcessLookupError):  # (a thread that ended meanwhile)
            continue
    return out


def _priorities(pid: int) -> set[tuple[int, int]]:
    """(scheduling policy, priority) of every thread of a process."""
    return {sched for _, _, sched in _threads(pid)}


def _assert_control_path_at(pid: int, priority: int, lines: list[str]) -> None:
    """Every thread but the middleware's housekeeping ones at SCHED_FIFO ``priority`` (the main thread, the
    middleware's receive threads and unnamed ones, such as rclpy's EventsExecutor's timer thread, among them); the
    housekeeping threads at normal scheduling."""
    threads = _threads(pid)
    housekeeping = [(name, sched) for _, name, sched in threads if name.startswith(_HOUSEKEEPING_THREADS)]
    rest = [(name, sched) for _, name, sched in threads if not name.startswith(_HOUSEKEEPING_THREADS)]
    assert housekeeping and sum(bool(_RECEIVE_THREADS.fullmatch(name)) for name, _ in rest) and len(rest) > 2, threads
    assert {sched for _, sched in rest} == {(os.SCHED_FIFO, priority)}, (rest, "\n".join(lines[-20:]))
    assert {sched for _, sched in housekeeping} == {(os.SCHED_OTHER, 0)}, housekeeping


def _locked_kb(pid: int) -> int:
    """The process's locked memory (VmLck, kB)."""
    status = Path(f"/proc/{pid}/status").read_text().splitlines()
    line = next(line for line in status if line.startswith("VmLck:"))
    return int(line.split()[1])


def _threads_cpus(pid: int) -> set[frozenset[int]]:
    """The cores each thread of a process may run on (its Cpus_allowed_list)."""
    out = set()
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            status = Path(f"/proc/{pid}/task/{tid}/status").read_text().splitlines()
        except (FileNotFoundError, ProcessLookupError):  # (a thread that ended meanwhile)
            continue
        line = next(line for line in status if line.startswith("Cpus_allowed_list:"))
        out.add(parse_cpu_list(line.split(":", 1)[1].strip()))
    return out


def test_the_asked_priority_reaches_the_control_path_and_the_cores_every_thread(ros_domain, tmp_path):
    usable = usable_cpus()
    kept = max(usable) if len(usable) > 1 else None  # (one core: none to keep apart, the priorities only)
    path = tmp_path / "graph.yaml"
    path.write_text(
        "nodes:\n"
        "  - executable: tools.virtual_robot\n    name: virtual_robot\n    ros: false\n"
        f"    arguments: ['--domain-id', '{ros_domain % 100 + 1}', '--interface', 'lo', '--gantry',\n"
        "                '--priority', '20']\n"
        f"  - executable: robot_state\n    priority: 15\n    cpus: '{'' if kept is None else kept}'\n")
    lines: list[str] = []
    graph = GraphProcesses(load_graph(str(path)).resolve(), output=lines.append)
    graph.start()
    try:
        deadline = time.monotonic() + 60.0
        while not (any("virtual_robot ready" in line for line in lines)
                   and any("frames rooted at pelvis" in line for line in lines)):
            assert graph.check() is None and time.monotonic() < deadline, "\n".join(lines[-20:])
            time.sleep(0.1)
        time.sleep(1.0)  # (robot_state applies it once constructed, just after its line)
        if kept is not None:  # every thread, DDS's and MuJoCo's started after the process's start included
            assert _threads_cpus(graph.pid("robot_state")) == {frozenset({kept})}, "\n".join(lines[-20:])
            assert _threads_cpus(graph.pid("virtual_robot")) == {usable - {kept}}, "\n".join(lines[-20:])
        if os.geteuid() == 0:
            _assert_control_path_at(graph.pid("virtual_robot"), 20, lines)  # Cyclone DDS
            _assert_control_path_at(graph.pid("robot_state"), 15, lines)  # Fast DDS
            # mlockall: every mapping locked (the whole of each, MCL_ONFAULT: their pages once touched)
            assert min(_locked_kb(graph.pid(name)) for name in ("virtual_robot", "robot_state")) > 100_000
        else:
            assert sum("SCHED_FIFO" in line and "refused" in line for line in lines) == 2, "\n".join(lines[-20:])
            assert _priorities(graph.pid("robot_state")) == {(os.SCHED_OTHER, 0)}
        assert graph.check() is None
    finally:
        graph.stop()


def test_the_simulated_control_chain_runs_at_its_priority_in_real_time_only_and_on_its_cores(rclpy_context):
    """sim.yaml's control_priority and control_cpus: in real time the composed control process (sim_bridge, policy,
    retarget, xr_input) runs its control path at that priority and every thread on the kept core, robot_state at
    normal scheduling on the others, and the commands flow (without the right to the priority, it says so once and
    runs on); in lockstep, where the chain never sleeps, sim_bridge refuses to start with the priority and says
    why."""
    from g1_teleop.ros.polled_subscription import command_reader

    graph = load_graph("sim")
    reader = command_reader(rclpy_context, "_priority_commands")
    lines: list[str] = []
    usable = usable_cpus()
    kept = max(usable) if len(usable) > 1 else None  # (one core: none to keep apart, the priority only)
    realtime = GraphProcesses(graph.resolve({"lockstep": "false", "control_priority": "30",
                                             "control_cpus": "" if kept is None else str(kept)}),
                              output=lines.append)
    realtime.start()
    try:
        commands, deadline = 0, time.monotonic() + 60.0
        while commands < 50:  # 1 s of commands: the nodes spin, past their priority's setting
            assert realtime.check() is None and time.monotonic() < deadline, "\n".join(lines[-20:])
            time.sleep(0.1)
            commands += len(reader.take_all())
        if os.geteuid() == 0:
            _assert_control_path_at(realtime.pid("policy"), 30, lines)
            assert _locked_kb(realtime.pid("policy")) > 100_000
        else:
            assert sum("SCHED_FIFO" in line and "refused" in line for line in lines) == 1, "\n".join(lines[-20:])
        assert _priorities(realtime.pid("robot_state")) == {(os.SCHED_OTHER, 0)}
        if kept is not None:  # every thread, DDS's and MuJoCo's included
            assert _threads_cpus(realtime.pid("policy")) == {frozenset({kept})}, "\n".join(lines[-20:])
            assert _threads_cpus(realtime.pid("robot_state")) == {usable - {kept}}, "\n".join(lines[-20:])
    finally:
        realtime.stop()
    lines.clear()
    lockstep = GraphProcesses(graph.resolve({"control_priority": "30"}), output=lines.append)
    lockstep.start()
    try:
        deadline = time.monotonic() + 60.0
        while (failure := lockstep.check()) is None:
            assert time.monotonic() < deadline, "\n".join(lines[-20:])
            time.sleep(0.1)
        assert "exited with code 2" in failure, failure
        assert any("control_priority needs lockstep:=false" in line for line in lines), "\n".join(lines[-20:])
    finally:
        lockstep.stop()
