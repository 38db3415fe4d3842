"""Nodes given malformed input log one clear warning per kind of problem and keep their last safe output.

sim_bridge (joint_command) and policy (teleop/arm_target) run as separate processes; this test plays
the node upstream of each, in lockstep, over DDS.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import numpy as np
import pytest
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState

from g1_teleop.core.robot_description import ARM_INDICES, load_robot
from g1_teleop.launching.graph_description import NodeSpec
from g1_teleop.launching.process_runner import GraphProcesses

pytestmark = pytest.mark.integration

QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=10, reliability=ReliabilityPolicy.RELIABLE)
ROBOT = load_robot()
NAMES = list(ROBOT.joint_names)
ARM_NAMES = [NAMES[i] for i in ARM_INDICES]
ELBOW = NAMES.index("left_elbow_joint")
# One warning per kind, recognised by these fragments.
WARNINGS = ("expected; missing", "non-finite", "unknown joint names")


def malformed(names: list[str], values: list[float]) -> list[tuple[list[str], list[float]]]:
    """(names, positions) of a message with a joint missing, with a NaN, and with an unknown name."""
    nan = list(values)
    nan[1] = math.nan
    return [(names[:-1], values[:-1]), (names, nan), ([*names[:-1], "tail_joint"], values)]


class LockstepResponder:
    """Answers each joint_states stamp on ``topic``, as the node it stands in for does: ``good`` for the first
    ``good_ticks`` periods, then the malformed variants in turn; a re-published stamp gets the same answer."""

    def __init__(self, context, topic: str, names: list[str], values: np.ndarray, good_ticks: int) -> None:
        self.node = rclpy.create_node("fake_upstream", context=context)
        self.executor = SingleThreadedExecutor(context=context)
        self.executor.add_node(self.node)
        self.pub = self.node.create_publisher(JointState, topic, QOS)
        self.states: list[JointState] = []
        self.commands: list[JointState] = []
        self.node.create_subscription(JointState, "joint_states", self.answer, QOS)
        self.node.create_subscription(JointState, "joint_command", self.commands.append, QOS)
        self.messages = [(names, values.tolist())] * good_ticks
        self.bad = malformed(names, values.tolist())
        self.answers: dict[tuple[int, int], JointState] = {}

    @property
    def ticks(self) -> int:
        return len(self.answers)

    def answer(self, state: JointState) -> None:
        self.states.append(state)
        stamp = state.header.stamp
        key = (stamp.sec, stamp.nanosec)
        if key not in self.answers:
            k = len(self.answers)
            names, position = self.messages[k] if k < len(self.messages) else self.bad[k % 3]
            self.answers[key] = JointState(name=names, position=position)
            self.answers[key].header.stamp = stamp
        self.pub.publish(self.answers[key])

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


class Lines(list):
    def count_of(self, text: str) -> int:
        return sum(text in line for line in self)


def run_and_collect(context, specs, topic, names, values, good_ticks, total_ticks, warning):
    lines = Lines()
    graph = GraphProcesses(specs, output=lines.append)
    graph.start()
    upstream = LockstepResponder(context, topic, names, values, good_ticks)
    try:
        assert upstream.spin_until(lambda: upstream.ticks >= total_ticks, 90.0), (
            "the graph stopped stepping:\n" + "\n".join(lines))
        assert upstream.spin_until(lambda: lines.count_of(warning) >= 3, 5.0), "\n".join(lines)
        assert sorted(graph.alive()) == sorted(s.name for s in specs), "a node died:\n" + "\n".join(lines)
    finally:
        graph.stop()
        upstream.close()
    assert lines.count_of(warning) == 3, "\n".join(lines)
    for fragment in WARNINGS:
        assert lines.count_of(fragment) == 1, f"expected one warning with {fragment!r}:\n" + "\n".join(lines)
    return upstream


def test_sim_bridge_rejects_malformed_commands_and_keeps_the_last_safe_one(rclpy_context):
    target = ROBOT.default_q.copy()
    target[ELBOW] = 0.6
    upstream = run_and_collect(
        rclpy_context, [NodeSpec("sim_bridge", "sim_bridge", True, {"lockstep": True, "gantry": True})],
        "joint_command", NAMES, target, good_ticks=40, total_ticks=100, warning="rejected joint_command")
    # The elbow kept tracking the last good target through 60 malformed periods.
    elbow = [s.position[ELBOW] for s in upstream.states[-20:]]
    assert np.allclose(elbow, 0.6, atol=0.05), elbow


def test_policy_rejects_malformed_arm_targets_and_keeps_the_last_one(rclpy_context):
    arm = ROBOT.default_q[ARM_INDICES].copy()
    arm[ARM_NAMES.index("left_elbow_joint")] = 0.6
    specs = [
        NodeSpec("sim_bridge", "sim_bridge", True, {"lockstep": True}),
        NodeSpec("policy", "policy", True, {"lockstep": True, "use_sim_time": True, "sync_timeout_s": 0.2}),
    ]
    upstream = run_and_collect(rclpy_context, specs, "teleop/arm_target", ARM_NAMES, arm,
                               good_ticks=60, total_ticks=90, warning="ignored teleop/arm_target")
    # Commands kept the last good elbow target (reached through the ±0.01 rad limiter by tick 60).
    elbow_targets = [c.position[ELBOW] for c in upstream.commands[-20:]]
    assert np.allclose(elbow_targets, 0.6, atol=1e-9), elbow_targets
    assert all(np.all(np.isfinite(c.position)) for c in upstream.commands)
