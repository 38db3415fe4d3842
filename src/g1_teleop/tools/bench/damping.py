"""`g1-teleop bench damping`: the policy dies (or the whole ROS side stands still) → the first damping LowCmd.

Starts ``real`` against the virtual robot as `g1-teleop soak` does (:mod:`g1_teleop.tools.virtual_graph`: private
domains on lo, controller builtin) with the shipped timeouts, brings the bridge to ACTIVE, plays the scenario, and
per trial, after ``SETTLE_S`` ACTIVE:

* ``kill``: SIGKILLs the policy process; the time from the kill to the first LowCmd at the robot with every kp 0 and
  the damping profile's kd. Then the policy is started again and the bridge re-activated (start, HOLD, activate).
* ``stop``: SIGSTOPs every ROS node (hw_bridge's ROS side, policy, retarget, xr_input, robot_state), not hw_bridge's
  LowCmd process; the time from the first SIGSTOP to the first damping LowCmd. Then SIGCONT and re-activation.

Goal: every trial within ``command_grace_s`` + 50 ms. Figures per kind: ``{kind}_trials``,
``{kind}_within_grace_plus_50ms`` (count), ``{kind}_to_damping_{p50,max}_ms``, the bridge's reason for each damping
(``{kind}_damped_on_{grace,source_gone,lowstate,other}``) and where a late one lost its time:
``{kind}_bridge_damp_age_max_ms``, the command age the bridge damped at (its log line: grace + a 2 ms tick when its
loop keeps time), and ``{kind}_lowcmd_gap_max_ms``, the longest gap between LowCmds at the robot from the kill to the
damping (the loop, its DDS delivery or this process stalled). Also ``grace_s``, ``load_1m`` (the machine's load at
the end) and ``false_trips``: dampings while no trial ran (each printed on stderr; the bridge is brought up again).
Options from the environment:
``G1_TELEOP_BENCH_DAMPING_TRIALS`` (trials per kind, default 20) and ``G1_TELEOP_BENCH_DAMPING_STATE_TIMEOUT_S``
(hw_bridge's LowState timeout, default the shipped one; a virtual robot sharing 2 cores with the graph may stall
beyond it). Times: wall seconds (monotonic); figures in ms.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import signal
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from g1_teleop.tools.bench.figures import BenchError, require_robot_sdk

if TYPE_CHECKING:
    from g1_teleop.hardware.robot_dds import RobotDds

ROS_DOMAIN_ID = 225  # the bench's own domains: never a robot's (0), the tests' (1–200) nor the other benches'
ROBOT_DOMAIN_ID = 224
TRIALS = 20  # per kind
TRIALS_ENV = "G1_TELEOP_BENCH_DAMPING_TRIALS"
STATE_TIMEOUT_ENV = "G1_TELEOP_BENCH_DAMPING_STATE_TIMEOUT_S"
PRIORITY_ENV = "G1_TELEOP_BENCH_DAMPING_PRIORITY"  # P: the graph's priorities under P, as soak --priority
MARGIN_S = 0.05  # the goal: damping within command_grace_s + this
SETTLE_S = 2.0  # ACTIVE before a trial: the 1 s activate blend, then steady commands
WAIT_S = 3.0  # after a kill or stop, beyond the grace: no damping LowCmd by then fails the trial
MAX_FALSE_TRIPS = 5  # a bridge that trips this often by itself is not measured
KINDS = ("kill", "stop")
REASONS = {"grace": "(grace ", "source_gone": "no publisher left", "lowstate": "LowState "}
_AGE = re.compile(r"→ DAMP: no valid joint_command for (\d+(?:\.\d+)?) s")


@dataclass(frozen=True)
class DampingOptions:
    """Trials per kind, hw_bridge's LowState timeout (s; None: shipped) and the control path's real-time priority
    (``PRIORITY_ENV``; 0: normal scheduling)."""

    trials: int = TRIALS
    state_timeout_s: float | None = None
    priority: int = 0

    def __post_init__(self) -> None:
        if self.trials < 1:
            raise ValueError(f"{TRIALS_ENV}: give a positive number of trials, got {self.trials}")
        if self.state_timeout_s is not None and not self.state_timeout_s > 0:
            raise ValueError(f"{STATE_TIMEOUT_ENV}: give a positive number of seconds, got {self.state_timeout_s}")
        if not 0 <= self.priority <= 99:
            raise ValueError(f"{PRIORITY_ENV}: give 0 (normal scheduling) or a SCHED_FIFO priority 1–99, got "
                             f"{self.priority}")

    @classmethod
    def from_env(cls, env: dict[str, str] | os._Environ[str]) -> DampingOptions:
        """The options set in ``env`` (unset or empty: the defaults); ValueError naming the variable to fix."""
        values: dict[str, object] = {}
        for name, key, kind in ((TRIALS_ENV, "trials", int), (STATE_TIMEOUT_ENV, "state_timeout_s", float),
                                (PRIORITY_ENV, "priority", int)):
            text = env.get(name, "").strip()
            if text:
                try:
                    values[key] = kind(text)
                except ValueError:
                    raise ValueError(f"{name}={text!r}: give a {'whole ' if kind is int else ''}number") from None
        return cls(**values)  # type: ignore[arg-type]


def is_damping(cdr: bytes, damping_kd: np.ndarray) -> bool:
    """Whether a LowCmd sample (its CDR bytes) damps the body: every kp 0, kd the damping profile's (float32)."""
    from g1_teleop.hardware.lowcmd import NUM_BODY_JOINTS, lowcmd_from_cdr, unpack_lowcmd

    fields = unpack_lowcmd(lowcmd_from_cdr(cdr))
    body = slice(0, NUM_BODY_JOINTS)
    return bool(np.all(fields.kp[body] == 0) and np.allclose(fields.kd[body], damping_kd, rtol=1e-5, atol=1e-6))


def damp_reason(line: str) -> str:
    """The kind of a bridge's "→ DAMP: reason" line: grace, source_gone, lowstate or other."""
    reason = line.split("→ DAMP:", 1)[-1]
    return next((kind for kind, text in REASONS.items() if text in reason), "other")


def damp_age_s(line: str) -> float | None:
    """The command age (s) the bridge damped at, from its "→ DAMP: no valid joint_command for X s" line."""
    match = _AGE.search(line)
    return float(match.group(1)) if match else None


def longest_gap_s(times: Sequence[float]) -> float | None:
    """The longest time (s) between consecutive arrivals, None with fewer than two."""
    return float(np.max(np.diff(times))) if len(times) > 1 else None


def _max_ms(values: Sequence[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return round(max(known) * 1e3, 1) if known else None


def damping_figures(kind: str, delays_s: Sequence[float | None], reasons: Sequence[str],
                    grace_s: float, ages_s: Sequence[float | None] = (),
                    gaps_s: Sequence[float | None] = ()) -> dict[str, float | None]:
    """A kind's figures from its trials' delays (s; None: no damping came), the bridge's damping reasons, the
    command ages it damped at (s) and the longest LowCmd gaps at the robot from the kill to the damping (s)."""
    measured = [d for d in delays_s if d is not None]
    figures: dict[str, float | None] = {
        f"{kind}_trials": len(delays_s),
        f"{kind}_within_grace_plus_50ms": sum(1 for d in measured if d <= grace_s + MARGIN_S),
        f"{kind}_without_damping": len(delays_s) - len(measured),
    }
    if measured:
        ms = np.asarray(measured) * 1e3
        figures.update({f"{kind}_to_damping_p50_ms": round(float(np.percentile(ms, 50)), 1),
                        f"{kind}_to_damping_min_ms": round(float(ms.min()), 1),
                        f"{kind}_to_damping_max_ms": round(float(ms.max()), 1)})
    for reason in (*REASONS, "other"):
        figures[f"{kind}_damped_on_{reason}"] = sum(1 for r in reasons if r == reason)
    if ages_s:
        figures[f"{kind}_bridge_damp_age_max_ms"] = _max_ms(ages_s)
    if gaps_s:
        figures[f"{kind}_lowcmd_gap_max_ms"] = _max_ms(gaps_s)
    return figures


class _LowCmdTap:
    """LowCmd samples at the robot with their arrival times (s), kept only while armed: decoding all 500 a second
    would load the machine being measured."""

    def __init__(self, dds: RobotDds) -> None:
        from g1_teleop.hardware.robot_dds import TOPIC_LOWCMD

        self.samples: list[tuple[float, bytes]] = []
        self.armed = False
        self._scanned = 0
        dds.raw_reader(TOPIC_LOWCMD, on_samples=self._on_samples)

    def _on_samples(self, samples: list[bytes], t: float) -> None:
        if self.armed:
            self.samples.extend((t, sample) for sample in samples)

    def arm(self) -> None:
        self.samples, self._scanned, self.armed = [], 0, True

    def first_damping(self, after_s: float, damping_kd: np.ndarray) -> float | None:
        """The arrival time (s) of the first damping LowCmd after ``after_s`` among those not yet looked at."""
        while self._scanned < len(self.samples):
            t, sample = self.samples[self._scanned]
            self._scanned += 1
            if t > after_s and is_damping(sample, damping_kd):
                self.armed = False
                return t
        return None


def bench_damping() -> dict[str, float | None]:
    """Kill and stop trials against the virtual robot (module doc); their figures (ms, counts)."""
    from g1_teleop.core.robot_description import load_robot
    from g1_teleop.hardware.bridge_safety import BridgeSafetyConfig
    from g1_teleop.hardware.robot_dds import RobotDds
    from g1_teleop.launching.process_runner import GraphProcesses
    from g1_teleop.tools.virtual_graph import GraphPriorities, Operator, VirtualGraphConfig, virtual_graph_nodes

    require_robot_sdk()
    try:
        options = DampingOptions.from_env(os.environ)
    except ValueError as exc:
        raise BenchError(str(exc)) from None
    shipped = BridgeSafetyConfig()
    grace_s = shipped.command_grace_s
    damping_kd = load_robot().gains(shipped.damping_gain_profile)[1]
    cfg = VirtualGraphConfig(ROS_DOMAIN_ID, ROBOT_DOMAIN_ID, "builtin", "default", options.state_timeout_s,
                             GraphPriorities.under(options.priority))
    nodes = virtual_graph_nodes(cfg)
    graph_grace_s = float(next(n for n in nodes if n.name == "hw_bridge").parameters["command_grace_s"])
    if graph_grace_s != grace_s:
        raise BenchError(f"config/graphs/real.yaml gives hw_bridge command_grace_s {graph_grace_s:g} s, "
                         f"bridge_safety.py ships {grace_s:g} s: make them agree")
    ros_nodes = [n.name for n in nodes if n.ros]
    log: list[str] = []
    graph = GraphProcesses(nodes, env=cfg.env, output=log.append)
    operator = Operator(graph, log, ROS_DOMAIN_ID, "bench_damping")
    dds = RobotDds(ROBOT_DOMAIN_ID, "lo")
    tap = _LowCmdTap(dds)
    delays: dict[str, list[float | None]] = {kind: [] for kind in KINDS}
    reasons: dict[str, list[str]] = {kind: [] for kind in KINDS}
    ages: dict[str, list[float | None]] = {kind: [] for kind in KINDS}  # the command age the bridge damped at
    gaps: dict[str, list[float | None]] = {kind: [] for kind in KINDS}  # the longest LowCmd gap, kill → damping
    false_trips = 0

    def stop_ros_side(sig: int) -> None:
        for name in ros_nodes:
            if name == "hw_bridge":
                os.kill(graph.pid(name), sig)  # its ROS side only: the LowCmd process, its child, runs on
            else:
                os.killpg(graph.pid(name), sig)

    def trial(kind: str) -> None:
        """One kill or stop: its delay and the bridge's reason."""
        damp_lines = len(log)
        found: list[float] = []

        def damped() -> bool:
            if not found and (t := tap.first_damping(start, damping_kd)) is not None:
                found.append(t)
            return bool(found)

        tap.arm()
        start = time.monotonic()
        if kind == "kill":
            graph.kill("policy")
        else:
            stop_ros_side(signal.SIGSTOP)
        try:
            operator.spin_until(damped, grace_s + WAIT_S, "no damping LowCmd")
        except RuntimeError:
            if graph.check() is not None:
                raise
        finally:
            tap.armed = False
            if kind == "stop":
                stop_ros_side(signal.SIGCONT)
        delays[kind].append(found[0] - start if found else None)
        gaps[kind].append(longest_gap_s([t for t, _ in tap.samples if start <= t <= (found or [math.inf])[0]]))
        operator.wait_state("DAMP", 30.0)
        with contextlib.suppress(RuntimeError):  # (the bridge's log line may trail its diagnostics)
            operator.spin_until(lambda: any("→ DAMP" in line for line in log[damp_lines:]), 2.0, "")
        lines = [line for line in log[damp_lines:] if "→ DAMP" in line]
        reasons[kind].append(damp_reason(lines[0]) if lines else "other")
        ages[kind].append(damp_age_s(lines[0]) if lines else None)
        shown = "none" if delays[kind][-1] is None else f"{delays[kind][-1] * 1e3:.1f} ms"
        print(f"bench damping: {kind} {len(delays[kind])}/{options.trials}: {shown}, {reasons[kind][-1]}, bridge "
              f"damped at {_max_ms(ages[kind][-1:])} ms, longest LowCmd gap {_max_ms(gaps[kind][-1:])} ms",
              file=sys.stderr)
        if kind == "kill":
            graph.restart("policy")

    def false_trip(lines: list[str]) -> None:
        """The bridge damped while no trial ran: say so, give up after MAX_FALSE_TRIPS."""
        nonlocal false_trips
        false_trips += 1
        print(f"bench damping: the bridge damped by itself: {lines[0] if lines else operator.bridge_state}",
              file=sys.stderr)
        if false_trips > MAX_FALSE_TRIPS:
            raise BenchError(f"the bridge damped {false_trips} times without a trial:\n{operator.last_lines()}")
        operator.wait_state("DAMP", 30.0)

    def bring_up() -> None:
        """To ACTIVE, and SETTLE_S there with the scenario playing; again after a false trip."""
        while True:
            mark = len(log)
            try:
                operator.bring_up(activate_timeout_s=120.0)
                operator.call("xr_input/play")
                operator.spin_for(SETTLE_S)
            except RuntimeError:
                if graph.check() is not None or not any("→ DAMP" in line for line in log[mark:]):
                    raise
            trips = [line for line in log[mark:] if "→ DAMP" in line]
            if not trips and operator.bridge_state == "ACTIVE":
                return
            false_trip(trips)

    graph.start()
    try:
        operator.wait_state("ZERO_TORQUE", 90.0)
        for kind in KINDS:
            for _ in range(options.trials):
                bring_up()
                trial(kind)
    except RuntimeError as exc:
        raise BenchError(str(exc)) from None
    finally:
        graph.stop()
        dds.close()
        operator.close()
    figures: dict[str, float | None] = {"grace_s": grace_s, "state_timeout_s": options.state_timeout_s
                                        or shipped.state_timeout_s, "priority": options.priority,
                                        "false_trips": false_trips,
                                        "load_1m": round(os.getloadavg()[0], 2)}
    for kind in KINDS:
        figures.update(damping_figures(kind, delays[kind], reasons[kind], grace_s, ages[kind], gaps[kind]))
    return figures
