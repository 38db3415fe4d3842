"""sim_bridge applies the PD gains published on teleop/gains, as the simulator used them: read back from the torques
it reports in joint_states (tests/support/applied_gains.py solves kp and kd per joint from them), not from what
it parsed.

sim_bridge runs as its own process in lockstep on the gantry; this test plays the policy over DDS: it answers every
state with a command that excites every joint and publishes teleop/gains (before that tick's command, as the policy
node does) at chosen ticks.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
import pytest
import rclpy
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.executors import SingleThreadedExecutor
from sensor_msgs.msg import JointState

from g1_teleop.core.robot_description import load_robot
from g1_teleop.launching.graph_description import NodeSpec
from g1_teleop.launching.process_runner import GraphProcesses
from g1_teleop.ros.messages import gains_msg, joint_state_msg, to_stamp
from g1_teleop.ros.qos import QOS_COMMAND, QOS_LATCHED, QOS_STATE
from support.applied_gains import (
    EXCITED_KD_RTOL,
    EXCITED_KP_RTOL,
    GainFit,
    Periods,
    excitation,
    fit_gains,
    torque_mismatch,
)

pytestmark = pytest.mark.integration

ROBOT = load_robot()
NAMES = list(ROBOT.joint_names)
WAIST = [NAMES.index(f"waist_{axis}_joint") for axis in ("yaw", "roll", "pitch")]
PHYSICS_DT, CONTROL_DT = 0.005, 0.02


class ExcitingPolicy:
    """Plays the policy in lockstep: answers each new joint_states stamp (tick k) with the excitation command,
    after publishing ``gains_at[k]`` on teleop/gains, and keeps one row per control period (Periods)."""

    def __init__(self, context, gains_at: dict[int, list[JointState]]) -> None:
        self.node = rclpy.create_node("exciting_policy", context=context)
        self.executor = SingleThreadedExecutor(context=context)
        self.executor.add_node(self.node)
        self.gains_at = gains_at
        self.pub_gains = self.node.create_publisher(JointState, "teleop/gains", QOS_LATCHED)
        self.pub_command = self.node.create_publisher(JointState, "joint_command", QOS_COMMAND)
        self.node.create_subscription(JointState, "joint_states", self.on_state, QOS_STATE)
        self.node.create_subscription(DiagnosticArray, "diagnostics", self.on_diagnostics, 10)
        self.answers: dict[int, JointState] = {}  # stamp (ns) → the command sent for it
        self.rows: list[tuple[np.ndarray, ...]] = []
        self._pending: tuple[np.ndarray, ...] | None = None  # the last command and the state it answered
        self.diagnostics: dict[str, str] = {}  # sim_bridge's latest values

    @property
    def ticks(self) -> int:
        return len(self.answers)

    def on_state(self, state: JointState) -> None:
        stamp = state.header.stamp.sec * 1_000_000_000 + state.header.stamp.nanosec
        if stamp not in self.answers:  # a new period (not a re-publication while sim_bridge waits)
            q, dq, tau = (np.array(values) for values in (state.position, state.velocity, state.effort))
            if self._pending is not None:
                self.rows.append((*self._pending, q, dq, tau))
            k = self.ticks
            for gains in self.gains_at.get(k, []):
                self.pub_gains.publish(gains)
            q_target, dq_target, tau_ff = excitation(ROBOT, k * CONTROL_DT)
            self.answers[stamp] = joint_state_msg(NAMES, state.header.stamp, q_target, dq_target, tau_ff)
            self._pending = (q_target, dq_target, tau_ff, dq)
        self.pub_command.publish(self.answers[stamp])

    def on_diagnostics(self, msg: DiagnosticArray) -> None:
        for status in msg.status:
            if status.name.endswith("sim_bridge"):
                self.diagnostics = {kv.key: kv.value for kv in status.values}

    def spin_until(self, condition: Callable[[], bool], timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            self.executor.spin_once(timeout_sec=0.02)
            if condition():
                return True
        return False

    def close(self) -> None:
        self.executor.shutdown()
        self.node.destroy_node()


def fit(periods: Periods) -> GainFit:
    return fit_gains(periods, PHYSICS_DT, CONTROL_DT, ROBOT.effort_limit)


def explained_better(period: Periods, joints: list[int], new: tuple, old: tuple) -> bool:
    """Whether the torques of ``period`` (one row) at ``joints`` fit the gains ``new`` better than ``old``."""
    def miss(gains: tuple) -> float:
        return float(np.abs(torque_mismatch(period, *gains, PHYSICS_DT, CONTROL_DT)[0, joints]).sum())
    return miss(new) < miss(old)


def test_sim_bridge_applies_the_latest_valid_gains_from_the_next_command_on(rclpy_context):
    default = ROBOT.gains("default")
    stiff_waist = tuple(g.copy() for g in default)
    stiff_waist[0][WAIST], stiff_waist[1][WAIST] = 900.0, 9.0  # unitree_rl_gym's preset
    stiffer = (1.5 * default[0], 1.5 * default[1])  # every joint changed
    too_stiff = (stiff_waist[0].copy(), stiff_waist[1].copy())
    too_stiff[0][WAIST[0]] = 2.0 * ROBOT.gain_limits[0][WAIST[0]]
    not_a_number = (stiff_waist[0].copy(), stiff_waist[1].copy())
    not_a_number[1][WAIST[1]] = float("nan")
    message = lambda gains: gains_msg(NAMES, to_stamp(0), *gains)  # noqa: E731
    gains_at = {100: [message(stiff_waist)], 150: [message(too_stiff)], 151: [message(too_stiff)],
                160: [message(not_a_number)], 161: [message(not_a_number)], 200: [message(stiffer)]}

    lines: list[str] = []
    graph = GraphProcesses([NodeSpec("sim_bridge", "sim_bridge", True, {"lockstep": True, "gantry": True})],
                           output=lines.append)
    graph.start()
    policy = ExcitingPolicy(rclpy_context, gains_at)
    try:
        assert policy.spin_until(lambda: len(policy.rows) >= 300, 90.0), (
            f"{len(policy.rows)} periods only:\n" + "\n".join(lines))
        policy.spin_until(lambda: policy.diagnostics.get("gains_refused") == "4", 5.0)  # checked below
        assert graph.alive() == ["sim_bridge"], "sim_bridge died:\n" + "\n".join(lines)
    finally:
        graph.stop()
        policy.close()
    log = "\n".join(lines)
    periods = Periods.stack(policy.rows[:300])

    # Before any teleop/gains: the default profile.
    before = fit(periods[25:100])
    np.testing.assert_allclose(before.kp, default[0], rtol=EXCITED_KP_RTOL)
    np.testing.assert_allclose(before.kd, default[1], rtol=EXCITED_KD_RTOL)
    # The waist at 900/9 from tick 100 on; the refused messages (ticks 150–161) changed nothing.
    stiff = fit(periods[110:200])
    np.testing.assert_allclose(stiff.kp, stiff_waist[0], rtol=EXCITED_KP_RTOL)
    np.testing.assert_allclose(stiff.kd, stiff_waist[1], rtol=EXCITED_KD_RTOL)
    # The latest valid message: every joint at 1.5×.
    latest = fit(periods[210:300])
    np.testing.assert_allclose(latest.kp, stiffer[0], rtol=EXCITED_KP_RTOL)
    np.testing.assert_allclose(latest.kd, stiffer[1], rtol=EXCITED_KD_RTOL)
    # Each from the command of the tick it was published with (the first period after it fits it better).
    assert explained_better(periods[100:101], WAIST, stiff_waist, default)
    assert explained_better(periods[200:201], list(range(len(NAMES))), stiffer, stiff_waist)

    assert "gains: gain profile 'default' (no teleop/gains yet)" in log, log  # said at start
    assert log.count("teleop/gains received") == 1, log
    assert log.count("refused teleop/gains") == 2, log  # one warning per kind: out of range, NaN
    assert policy.diagnostics.get("gains_refused") == "4", policy.diagnostics
    assert policy.diagnostics["gains"] == "teleop/gains since 2.000 s", policy.diagnostics
    print(f"waist kp applied {before.kp[WAIST].round(1)} (default profile), {stiff.kp[WAIST].round(1)} "
          f"(teleop/gains 900), kd {before.kd[WAIST].round(2)}, {stiff.kd[WAIST].round(2)} (9); worst "
          f"kp error of all joints {100 * np.max(np.abs(stiff.kp / stiff_waist[0] - 1)):.2f} %, kd "
          f"{100 * np.max(np.abs(stiff.kd / stiff_waist[1] - 1)):.2f} %")
