"""Real-time sim_bridge: when joint_command stops, the simulator holds the last target, then damps.

sim_bridge runs as its own process in real-time mode; this test plays the policy over DDS, sending an
elbow target for a while and then going silent.
"""

from __future__ import annotations

import signal
import time

import numpy as np
import pytest
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState

from g1_teleop.graph import NodeSpec
from g1_teleop.robot import load_robot
from g1_teleop.runner import GraphProcesses

pytestmark = pytest.mark.integration

QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=10, reliability=ReliabilityPolicy.RELIABLE)


def test_stale_commands_fall_back_to_hold_then_damping(rclpy_context):
    robot = load_robot()
    names = list(robot.joint_names)
    elbow = names.index("left_elbow_joint")
    target = robot.default_q.copy()
    target[elbow] = 0.6
    lines: list[str] = []
    graph = GraphProcesses([NodeSpec("sim_bridge", "sim_bridge", True, {
        "lockstep": False, "gantry": True, "command_hold_after_s": 0.1, "command_damp_after_s": 1.0})],
        output=lines.append)  # on the gantry: no lower-body controller runs
    graph.start()
    node = rclpy.create_node("fake_policy", context=rclpy_context)
    executor = SingleThreadedExecutor(context=rclpy_context)
    executor.add_node(node)
    pub = node.create_publisher(JointState, "joint_command", QOS)
    states: list[tuple[float, float]] = []  # (wall time, elbow angle)
    node.create_subscription(JointState, "joint_states",
                             lambda m: states.append((time.monotonic(), m.position[elbow])), QOS)

    def spin_for(seconds: float, publish: bool) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if publish:
                pub.publish(JointState(name=names, position=target.tolist()))
            executor.spin_once(timeout_sec=0.02)

    try:
        deadline = time.monotonic() + 60
        while not states and time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.1)
        assert states, "sim_bridge published no joint_states:\n" + "\n".join(lines)
        spin_for(3.0, publish=True)
        commanded_until = time.monotonic()
        elbow_before = states[-1][1]
        spin_for(0.6, publish=False)
        held = [q for t, q in states if commanded_until + 0.2 < t]
        spin_for(2.5, publish=False)
        assert graph.alive() == ["sim_bridge"], "sim_bridge died:\n" + "\n".join(lines)
    finally:
        graph.stop()
        executor.shutdown()
        node.destroy_node()
    text = "\n".join(lines)
    assert abs(elbow_before - 0.6) < 0.05, text  # tracking while commanded
    assert held and np.allclose(held, 0.6, atol=0.05), held  # hold: the last target
    hold = text.find("holding the last target")
    damp = text.find("damping only")
    assert 0 <= hold < damp, text
    # Damping: no stiffness left, the forearm sinks under gravity away from the held target.
    assert abs(states[-1][1] - 0.6) > 0.1, states[-1]


def test_a_starved_simulator_slips_instead_of_racing_to_catch_up(rclpy_context):
    """sim_bridge stopped (SIGSTOP) for 0.5 s, then resumed: simulated time goes on at the wall clock's pace
    from where it stopped (the run slips by the pause) instead of running the lost 0.5 s in a burst that the
    controllers could not follow."""
    lines: list[str] = []
    graph = GraphProcesses([NodeSpec("sim_bridge", "sim_bridge", True, {"lockstep": False, "gantry": True})],
                           output=lines.append)
    graph.start()
    node = rclpy.create_node("observer", context=rclpy_context)
    executor = SingleThreadedExecutor(context=rclpy_context)
    executor.add_node(node)
    samples: list[tuple[float, float]] = []  # (wall time received, simulated stamp)
    node.create_subscription(JointState, "joint_states", lambda m: samples.append(
        (time.monotonic(), m.header.stamp.sec + m.header.stamp.nanosec * 1e-9)), QOS)

    def spin_for(seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            executor.spin_once(timeout_sec=0.01)

    try:
        deadline = time.monotonic() + 60
        while not samples and time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.1)
        assert samples, "sim_bridge published no joint_states:\n" + "\n".join(lines)
        spin_for(1.0)
        graph.kill("sim_bridge", signal.SIGSTOP)
        time.sleep(0.5)
        before = len(samples)
        graph.kill("sim_bridge", signal.SIGCONT)
        spin_for(1.5)
        assert graph.alive() == ["sim_bridge"], "sim_bridge died:\n" + "\n".join(lines)
    finally:
        graph.stop()
        executor.shutdown()
        node.destroy_node()
    resumed_wall, resumed_stamp = samples[before]
    for wall, stamp in samples[before:]:  # never ahead of the wall clock since the resume (+ one period)
        assert stamp - resumed_stamp <= wall - resumed_wall + 0.03, (wall - resumed_wall, stamp - resumed_stamp)
    wall_s, sim_s = samples[-1][0] - samples[0][0], samples[-1][1] - samples[0][1]
    assert sim_s < wall_s - 0.4, (wall_s, sim_s)  # the pause is not made up
    assert "slips instead of catching up" in "\n".join(lines)
