"""`g1-teleop soak`: the real-time graph against the virtual robot for hours, ACTIVE, the scenario on loop.

Starts ``real`` with ``robot:=virtual`` on loopback (the robot's topics on a private CycloneDDS domain, the ROS side
on a private domain with localhost-only discovery: nothing here reaches a robot or a graph on the network), brings
the bridge up as an operator does (start, activate once the policy's commands arrive) and plays the scenario again
each time it ends. Every ``interval_s`` it prints one line of figures of that interval:

* ``rss_mb``: the resident memory of every process of the graph (hw_bridge's LowCmd process as ``hw_bridge/lowcmd``);
* ``joint_command``: every command the policy wrote (taken, like the LowCmds below, from a reader 2 s deep between
  the spins), the period p99 between their write times (DDS source timestamps, ms: the policy's output, not this
  process's own wake-ups; with ``--priority`` the control path would starve this process's reception at normal
  priority) and ``misses`` (periods over 1.5 × 20 ms);
* ``lowcmd``: every LowCmd the bridge wrote (a probe on the robot's domain takes them from a reader 2 s deep
  between its spins: none is lost, as one listener call per LowCmd would lose some on a busy machine), the period p99
  between their write times (DDS source timestamps, ms) and ``misses`` (over 2 × 2 ms);
* ``policy_ticks``: the worst window (about a second) of the policy's tick figures (its diagnostics): the p99 and
  max of how late a tick started after its time, the p99 of its take of inputs and of its step and publish (ms);
* ``trips``: safety transitions to DAMP since ACTIVE (goal 0), and the bridge's state (a ramp the bridge damped
  during bring-up, started again, is counted apart as ``bring_up_trips``);
* ``sched_fifo``: the processes running at real-time priority (``--priority``);
* ``steal_cpu_percent``: the CPU time the host of a virtual machine took in the interval (% of one core;
  tools.stolen_time; 0 on bare metal): a late period there may be the host's, not the graph's;
* ``load_1m``: the machine's load average; with ``stress_workers`` (``--stress N``) ``stress_cpu_percent``, the CPU
  stress-ng's ``--cpu N`` workers took (% of one core: 200 is both cores of a 2-core machine kept busy). They run at
  the graph's priority, not niced, from ACTIVE to the end: a machine busy with other work, not idle time filled.

At the end: each process's memory growth from the first interval to the last (%, goal < 5), the totals, and the exit
code 0 only if nothing tripped and every node lived. Times: wall seconds (monotonic).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from g1_teleop.core.cpu_affinity import parse_cpu_list
from g1_teleop.tools.stolen_time import StolenTime
from g1_teleop.tools.virtual_graph import GraphPriorities, Operator, VirtualGraphConfig, virtual_graph_nodes

ROS_DOMAIN_ID = 229  # the soak's own domains: never a robot's (0), the tests' (1–200) or the benches' (230, 231);
ROBOT_DOMAIN_ID = 228  # DDS ports (7400 + 250 · domain + …) leave nothing above 232
COMMAND_PERIOD_S, LOWCMD_PERIOD_S = 0.02, 0.002
# The readers keep 2 s of each (taken every 0.1 s): this process at normal priority, the control path at SCHED_FIFO
# (--priority) can hold it off for a second on 2 cores (a 0.5 s LowCmd reader lost ~5 % then)
LOWCMD_HISTORY, TAKE_S = 1000, 0.1
STRESS_TIMEOUT_MARGIN_S = 300.0  # stress-ng ends by itself this long after the soak's duration (bring-up, a crash)
_DURATION = re.compile(r"^\s*(\d+(?:\.\d*)?)\s*(h|m|s)?\s*$")


def parse_duration(text: str) -> float:
    """Seconds of '1h', '10m', '90s' or '90'."""
    match = _DURATION.match(text)
    if not match or float(match.group(1)) <= 0:
        raise ValueError(f"duration {text!r}: give a positive number with h, m or s (e.g. 1h, 10m, 90s)")
    return float(match.group(1)) * {"h": 3600.0, "m": 60.0, "s": 1.0, None: 1.0}[match.group(2)]


@dataclass(frozen=True)
class SoakConfig:
    duration_s: float
    interval_s: float = 60.0
    controller: str = "builtin"
    scenario: str = "default"
    ros_domain_id: int = ROS_DOMAIN_ID
    robot_domain_id: int = ROBOT_DOMAIN_ID
    state_timeout_s: float | None = None  # hw_bridge's LowState timeout; None: the bridge's default
    stress_workers: int = 0  # stress-ng --cpu workers beside the graph while ACTIVE; 0: none
    priority: int = 0  # SCHED_FIFO: the graph's priorities under P (virtual_graph.GraphPriorities.under); 0: normal
    control_cpus: str = ""  # the cores kept for the command chain (real.yaml's control_cpus); empty: none

    def __post_init__(self) -> None:
        if not 0 <= self.priority <= 99:
            raise ValueError(f"--priority ({self.priority}) must be 0 (normal scheduling) or a SCHED_FIFO priority "
                             "1–99")
        try:
            parse_cpu_list(self.control_cpus)
        except ValueError as exc:
            raise ValueError(f"--control-cpus: {exc}") from None
        if self.stress_workers < 0:
            raise ValueError(f"--stress ({self.stress_workers}) must be 0 (none) or a number of CPU workers")
        if not 0 < self.interval_s <= self.duration_s:
            raise ValueError(f"--interval ({self.interval_s:g} s) must be positive and at most --duration "
                             f"({self.duration_s:g} s)")


@dataclass
class _Arrivals:
    """The times (s, one clock per stream) of one stream's messages since the last take."""

    times: list[float] = field(default_factory=list)
    last: float | None = None

    def take(self, nominal_s: float, miss_factor: float) -> dict[str, float]:
        times, self.times = self.times, []
        stamps = ([self.last] if self.last is not None else []) + times
        if times:
            self.last = times[-1]
        periods = np.diff(stamps) if len(stamps) > 1 else np.zeros(0)
        return {"count": len(times),
                "period_p99_ms": round(float(np.percentile(periods, 99)) * 1e3, 2) if len(periods) else None,
                "misses": int(np.sum(periods > miss_factor * nominal_s))}


def labelled_processes(pids: dict[str, int]) -> dict[str, object]:
    """psutil's handle on each named process and on the processes it started (``name/child``; hw_bridge's LowCmd
    process as ``hw_bridge/lowcmd``); a process gone is None."""
    import psutil

    out: dict[str, object] = {}
    for name, pid in pids.items():
        try:
            process = out[name] = psutil.Process(pid)
            for child in process.children(recursive=True):
                out[f"{name}/lowcmd" if name == "hw_bridge" else f"{name}/{child.pid}"] = child
        except psutil.NoSuchProcess:
            out[name] = None
    return out


def process_memory_mb(pids: dict[str, int]) -> dict[str, float]:
    """Resident memory (MB) of each named process and of the processes it started (names as
    :func:`labelled_processes`)."""
    import psutil

    out: dict[str, float] = {}
    for name, process in labelled_processes(pids).items():
        try:
            out[name] = round(process.memory_info().rss / 2**20, 1) if process is not None else float("nan")
        except psutil.NoSuchProcess:
            out[name] = float("nan")
    return out


def fifo_processes(pids: dict[str, int]) -> list[str]:
    """The processes of the graph (names as :func:`labelled_processes`) scheduled SCHED_FIFO."""
    out = []
    for name, process in labelled_processes(pids).items():
        with contextlib.suppress(OSError, AttributeError):  # (gone meanwhile)
            if process is not None and os.sched_getscheduler(process.pid) == os.SCHED_FIFO:
                out.append(name)
    return sorted(out)


def memory_growth_percent(first: dict[str, float], last: dict[str, float]) -> dict[str, float]:
    return {name: round(100.0 * (last[name] - mb) / mb, 2) for name, mb in first.items() if name in last and mb > 0}


def stress_command(workers: int, timeout_s: float) -> list[str]:
    """stress-ng's command line: ``workers`` CPU hogs at the graph's priority (not niced: they take their fair share
    of the cores from the graph, as a busy machine does), ending by themselves after ``timeout_s`` (s) should this
    process die without stopping them."""
    if workers < 1:
        raise ValueError(f"--stress needs at least 1 worker, got {workers}")
    return ["stress-ng", "--cpu", str(workers), "--timeout", f"{math.ceil(timeout_s)}s", "--quiet"]


class CpuStress:
    """stress-ng running beside the graph: started with :meth:`start`, stopped (its whole process group) with
    :meth:`stop`, which returns the CPU it used (% of one core over its run: 200 is two cores kept busy)."""

    def __init__(self, workers: int, timeout_s: float) -> None:
        if shutil.which("stress-ng") is None:
            raise RuntimeError("busy cores need stress-ng, which is not installed: install it: apt-get install "
                               "stress-ng")
        self.command = stress_command(workers, timeout_s)
        self._process: subprocess.Popen | None = None
        self._started_s = 0.0

    def start(self) -> None:
        self._process = subprocess.Popen(self.command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                         stderr=subprocess.DEVNULL, start_new_session=True)
        self._started_s = time.monotonic()

    def cpu_seconds(self) -> float:
        """CPU time (s) of stress-ng and its workers so far."""
        import psutil

        if self._process is None:
            return 0.0
        try:
            root = psutil.Process(self._process.pid)
            processes = [root, *root.children(recursive=True)]
        except psutil.NoSuchProcess:
            return 0.0
        total = 0.0
        for process in processes:
            with contextlib.suppress(psutil.NoSuchProcess):
                times = process.cpu_times()
                total += times.user + times.system
        return total

    def stop(self) -> float | None:
        """Stop stress-ng; its CPU use (% of one core) over its run, None if it never ran."""
        if self._process is None:
            return None
        used_s, wall_s = self.cpu_seconds(), time.monotonic() - self._started_s
        for sig, wait_s in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 2.0)):
            if self._process.poll() is not None:
                break
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self._process.pid, sig)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._process.wait(wait_s)
        self._process = None
        return round(100.0 * used_s / wall_s, 1) if wall_s > 0 else None


def _exit_on_sigterm(signum: int, _frame: object) -> None:
    raise SystemExit(128 + signum)


def run_soak(cfg: SoakConfig, emit: Callable[[str], None] = print) -> dict:
    """Run the soak (module doc); the figures of every interval and the totals."""

    from g1_teleop.core.paths import scenario_path
    from g1_teleop.hardware.robot_dds import TOPIC_LOWCMD, RobotDds
    from g1_teleop.launching.process_runner import GraphProcesses
    from g1_teleop.operator.scenario import Scenario
    from g1_teleop.ros.polled_subscription import command_reader

    stress = CpuStress(cfg.stress_workers, cfg.duration_s + STRESS_TIMEOUT_MARGIN_S) if cfg.stress_workers else None
    scenario_s = Scenario.load(scenario_path(cfg.scenario)).duration
    graph_cfg = VirtualGraphConfig(cfg.ros_domain_id, cfg.robot_domain_id, cfg.controller, cfg.scenario,
                                   cfg.state_timeout_s, GraphPriorities.under(cfg.priority), cfg.control_cpus)
    log: list[str] = []
    nodes = virtual_graph_nodes(graph_cfg)
    os.sched_setaffinity(0, graph_cfg.other_cpus())  # this process's readers and stress-ng off the chain's cores
    graph = GraphProcesses(nodes, env=graph_cfg.env, output=log.append)
    operator = Operator(graph, log, cfg.ros_domain_id, "soak")
    commands = _Arrivals()
    commands_taken = command_reader(operator.context, "_soak_commands")
    lowcmds = _Arrivals()
    robot_dds = RobotDds(cfg.robot_domain_id, "lo")  # write times only: decoding 500 LowCmds a second costs CPU
    lowcmd_reader = robot_dds.raw_reader(TOPIC_LOWCMD, history=LOWCMD_HISTORY)
    intervals: list[dict] = []
    stress_cpu_percent = None
    bring_up_trips = 0
    terminated = signal.signal(signal.SIGTERM, _exit_on_sigterm)  # (so that stress-ng is stopped below too)
    graph.start()
    try:
        operator.wait_state("ZERO_TORQUE", 90.0)
        operator.bring_up()
        bring_up_trips = operator.trips()  # (a ramp damped and started again: not a trip of the running graph)
        if stress is not None:
            stress.start()
        loaded = f", stress-ng --cpu {cfg.stress_workers} beside it" if stress is not None else ""
        loaded += f", {graph_cfg.priorities.describe()}" if cfg.priority else ""
        loaded += f", the command chain on CPUs {cfg.control_cpus} only" if cfg.control_cpus else ""
        emit(f"soak: ACTIVE against the virtual robot, controller {cfg.controller}, scenario {cfg.scenario} "
             f"({scenario_s:g} s, on loop) for {cfg.duration_s:g} s{loaded}; a line every {cfg.interval_s:g} s")
        start = next_play = time.monotonic()
        commands_taken.take_all(), lowcmd_reader.take_timed(), operator.take_policy_ticks()  # (those of ACTIVE)
        stress_cpu_s, stolen = 0.0, StolenTime()
        while len(intervals) * cfg.interval_s < cfg.duration_s - 1e-9:
            now = time.monotonic()
            if now >= next_play:
                operator.call("xr_input/play")
                next_play = now + scenario_s
            boundary = start + (len(intervals) + 1) * cfg.interval_s
            if now < boundary:
                operator.spin_for(min(next_play, boundary, now + TAKE_S) - now)
                lowcmds.times.extend(t for _, t in lowcmd_reader.take_timed())
                commands.times.extend(info["source_timestamp"] * 1e-9 for _, info in commands_taken.take_all())
                continue
            trips = operator.trip_lines()[bring_up_trips:]
            figures = {"t_s": round(now - start, 1), "state": operator.bridge_state, "trips": len(trips),
                       "trip_lines": trips[-3:],
                       "joint_command": commands.take(COMMAND_PERIOD_S, 1.5),
                       "lowcmd": lowcmds.take(LOWCMD_PERIOD_S, 2.0),
                       "policy_ticks": operator.take_policy_ticks(),
                       "load_1m": round(os.getloadavg()[0], 2), "steal_cpu_percent": stolen.cpu_percent(),
                       "rss_mb": process_memory_mb(pids := {name: graph.pid(name) for name in graph.alive()}),
                       "sched_fifo": fifo_processes(pids)}
            if stress is not None:
                used_s = stress.cpu_seconds()
                figures["stress_cpu_percent"] = round(100.0 * (used_s - stress_cpu_s) / cfg.interval_s, 1)
                stress_cpu_s = used_s
            intervals.append(figures)
            emit(json.dumps(figures))
    finally:
        if stress is not None:
            stress_cpu_percent = stress.stop()
        alive = graph.alive()
        codes = graph.stop()
        robot_dds.close()
        operator.close()
        signal.signal(signal.SIGTERM, terminated)
    trips = operator.trip_lines()[bring_up_trips:]
    growth = memory_growth_percent(intervals[0]["rss_mb"], intervals[-1]["rss_mb"]) if intervals else {}
    summary = {"duration_s": cfg.duration_s, "intervals": len(intervals), "safety_trips": len(trips),
               "trip_lines": trips[:10], "bring_up_trips": bring_up_trips,
               "nodes_dead": sorted(set(codes) - set(alive)),
               "memory_growth_percent": growth,
               "memory_growth_max_percent": max(growth.values(), default=0.0),
               "joint_command_misses": sum(i["joint_command"]["misses"] for i in intervals),
               "lowcmd_misses": sum(i["lowcmd"]["misses"] for i in intervals),
               "lowcmd_period_p99_ms_worst": max((i["lowcmd"]["period_p99_ms"] or 0.0 for i in intervals),
                                                 default=None),
               "stress_cpu_workers": cfg.stress_workers, "priority": cfg.priority, "control_cpus": cfg.control_cpus,
               "stress_cpu_percent": stress_cpu_percent,
               "load_1m_mean": round(float(np.mean([i["load_1m"] for i in intervals])), 2) if intervals else None}
    return {"summary": summary, "intervals": intervals}
