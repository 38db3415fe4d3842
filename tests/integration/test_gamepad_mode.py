"""Gamepad mode end to end: sim_bridge, policy and retarget (mode gamepad) as separate processes in
lockstep; a fake gamepad publishes sensor_msgs/Joy and each hand moves the way its stick points."""

from __future__ import annotations

import time

import numpy as np
import pytest
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState, Joy

from g1_teleop.launching.graph_description import load_graph
from g1_teleop.launching.process_runner import GraphProcesses

pytestmark = pytest.mark.integration

QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=10, reliability=ReliabilityPolicy.RELIABLE)


def test_each_hand_moves_where_its_stick_points(rclpy_context, fk):
    nodes = [n for n in load_graph("sim").resolve({"retarget_mode": "gamepad"}) if n.name != "xr_input"]
    lines: list[str] = []
    graph = GraphProcesses(nodes, output=lines.append)
    graph.start()
    node = rclpy.create_node("fake_gamepad", context=rclpy_context)
    executor = SingleThreadedExecutor(context=rclpy_context)
    executor.add_node(node)
    joy = node.create_publisher(Joy, "joy", QOS)
    states: list[JointState] = []
    node.create_subscription(JointState, "joint_states", states.append, QOS)

    def hands() -> tuple[np.ndarray, np.ndarray]:
        left, right = fk(np.asarray(states[-1].position))
        return left[:3, 3], right[:3, 3]

    def drive(axes: list[float], buttons: list[int], sim_seconds: float, wall_seconds: float = 0.0) -> None:
        """Publish the reading for ``sim_seconds`` of simulated time, and at least ``wall_seconds``."""
        end = states[-1].header.stamp.sec + states[-1].header.stamp.nanosec / 1e9 + sim_seconds
        start = time.monotonic()
        while time.monotonic() < start + 60:
            joy.publish(Joy(axes=axes, buttons=buttons))
            executor.spin_once(timeout_sec=0.01)
            done = states[-1].header.stamp.sec + states[-1].header.stamp.nanosec / 1e9 >= end
            if done and time.monotonic() >= start + wall_seconds:
                return
        raise AssertionError("the simulation stopped advancing:\n" + "\n".join(lines))

    try:
        deadline = time.monotonic() + 60
        while not states and time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.1)
        assert states, "no joint_states:\n" + "\n".join(lines)
        # The gamepad is heard by retarget and policy: both must have matched it before it moves.
        while joy.get_subscription_count() < 2 and time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.1)
        assert joy.get_subscription_count() >= 2, "retarget and policy did not subscribe to joy"
        # Settle, sticks centred. The writer's side matched both readers; each reader may still be learning of
        # this writer (DDS discovery runs both ways), and lockstep runs a simulated second in a fraction of a wall
        # second: a drive before they know it went unheard (once in a full check: the hands did not move).
        drive([0.0] * 6, [0] * 8, 1.0, wall_seconds=2.0)
        left0, right0 = hands()
        axes = [0.0] * 6
        axes[1] = 0.6  # left stick forward, with the left shoulder button held: left hand up
        axes[3] = 0.6  # right stick to the left: right hand inwards (+y)
        buttons = [0] * 8
        buttons[4] = 1
        drive(axes, buttons, 1.0)
        drive([0.0] * 6, [0] * 8, 1.0)  # released: the hands stop
        left1, right1 = hands()
        assert sorted(graph.alive()) == sorted(n.name for n in nodes), "\n".join(lines)
    finally:
        graph.stop()
        executor.shutdown()
        node.destroy_node()
    # 0.15 m/s × (0.6 − 0.1)/0.9 of the stick for 1 s ≈ 8 cm, along the commanded axis only.
    left_move, right_move = left1 - left0, right1 - right0
    assert left_move[2] > 0.05 and np.linalg.norm(left_move[:2]) < 0.02, left_move
    assert right_move[1] > 0.05 and np.linalg.norm(right_move[[0, 2]]) < 0.02, right_move
