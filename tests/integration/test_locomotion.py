"""LOCOMOTION with OpenWBT's policies in the simulated graph (four nodes as separate processes, lockstep,
no gantry), driven as an operator would: this test is the operator. It asks for LOCOMOTION by service,
turns in place to a heading of 90° and side-steps 0.5 m to the left by cmd_vel, each until the robot's
odometry shows the goal reached (support.locomotion_goals), then stops and asks for SQUAT. Meanwhile
the default scenario moves both arms (reach forward, left up, right out): the arms follow it in SQUAT and
take the default arm pose from the LOCOMOTION request until the SQUAT request (a forward reach makes
OpenWBT's locomotion policy fall, see the README)."""

from __future__ import annotations

import math
import time
from pathlib import Path

import numpy as np
import pytest
from geometry_msgs.msg import Twist, Vector3
from nav_msgs.msg import Odometry
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import String
from std_srvs.srv import Trigger

from g1_teleop.core.robot_description import ARM_INDICES
from g1_teleop.launching.graph_description import load_graph
from g1_teleop.launching.process_runner import GraphProcesses
from g1_teleop.ros.qos import QOS_SENSOR
from g1_teleop.tools.run_recorder import Recorder
from support.checks import check_arm_slew
from support.locomotion_goals import Goal, GoalKind, GoalSeeker, PlanarPose

pytestmark = pytest.mark.integration

POLICIES = Path(__file__).resolve().parents[3] / "shared" / "policies" / "openwbt"


def heading_of(quat_wxyz: np.ndarray) -> np.ndarray:
    """Yaw (rad) of (N, 4) quaternions (w, x, y, z), written out here independently of the module."""
    w, x, y, z = quat_wxyz.T
    return np.arctan2(2 * (w * z + x * y), 1 - 2 * (y**2 + z**2))


def test_turn_and_side_step_until_reached_then_squat(rclpy_context, robot):
    if not (POLICIES / "loco.onnx").is_file():
        pytest.skip(f"OpenWBT policies not found at {POLICIES}: the reference data is not beside the repo")
    lines: list[str] = []
    graph = GraphProcesses(load_graph("sim").resolve(
        {"controller": "openwbt", "policy_dir": str(POLICIES), "gantry": "false", "scenario": "default",
         "wait_for_start": "true"}), output=lines.append)
    graph.start()
    recorder = Recorder(robot.joint_names, node_name="test_recorder", context=rclpy_context)
    operator = recorder  # one node: the recorder's topics plus the operator's
    executor = SingleThreadedExecutor(context=rclpy_context)
    executor.add_node(recorder)
    cmd_vel = operator.create_publisher(Twist, "cmd_vel", QOS_SENSOR)
    modes: list[str] = []
    operator.create_subscription(String, "teleop/mode", lambda m: modes.append(m.data), QoSProfile(
        depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL))
    clients = {name: operator.create_client(Trigger, f"teleop/{name}") for name in ("locomotion", "squat")}
    poses: list[tuple[float, PlanarPose]] = []

    def on_odom(msg: Odometry) -> None:
        p, o = msg.pose.pose.position, msg.pose.pose.orientation
        poses.append((msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9,
                      PlanarPose.from_pose((p.x, p.y, p.z), (o.w, o.x, o.y, o.z))))

    operator.create_subscription(Odometry, "odom", on_odom, 10)

    def spin(until, command=lambda: None, timeout_s: float = 120.0) -> None:
        deadline = time.monotonic() + timeout_s
        seen = len(poses)
        while not until():
            assert time.monotonic() < deadline, "timed out:\n" + "\n".join(lines[-40:])
            assert not graph.check(), graph.failure + "\n" + "\n".join(lines[-40:])
            executor.spin_once(timeout_sec=0.02)
            if len(poses) > seen:  # one command per control period, answering the latest odometry
                seen = len(poses)
                velocity = command()
                if velocity is not None:
                    vx, vy, wz = velocity
                    cmd_vel.publish(Twist(linear=Vector3(x=vx, y=vy), angular=Vector3(z=wz)))

    def call(name: str) -> Trigger.Response:
        future = clients[name].call_async(Trigger.Request())
        spin(future.done, timeout_s=10.0)
        return future.result()

    def sim_t() -> float:
        return poses[-1][0] if poses else 0.0

    seeker = GoalSeeker([Goal(GoalKind.TURN, math.pi / 2), Goal(GoalKind.LATERAL, 0.5)])
    try:
        spin(lambda: not recorder.publishers_missing(), timeout_s=60.0)
        recorder.start_simulation()
        spin(lambda: sim_t() > 2.0)  # stand 2 s
        accepted = call("locomotion")
        assert accepted.success, accepted.message
        locomotion_s = sim_t()
        spin(lambda: modes and modes[-1] == "LOCOMOTION")
        spin(lambda: seeker.done, command=lambda: seeker.command(*poses[-1]))
        stopped_s = sim_t()
        spin(lambda: sim_t() > stopped_s + 0.5, command=lambda: (0.0, 0.0, 0.0))  # stop: cmd_vel zero
        squat_requested_s = sim_t()
        assert call("squat").success
        spin(lambda: modes[-1] == "SQUAT")
        squat_s = sim_t()
        spin(lambda: sim_t() > squat_s + 4.0)  # stand in SQUAT mode 4 s: the arms rejoin the scenario
        assert sorted(graph.alive()) == sorted(n.name for n in graph.nodes), "\n".join(lines[-40:])
    finally:
        graph.stop()
        executor.shutdown()
        recording = recorder.recording()
        recorder.destroy_node()

    turn, step = seeker.outcomes
    assert turn.reached and step.reached, seeker.outcomes
    t = recording.odom_t
    heading = heading_of(recording.odom_q)
    # Judged from the recorded odometry, after the robot stopped (the operator's tolerance is tighter).
    after_turn = (t >= turn.end_s) & (t < step.start_s + 0.1)
    assert np.all(np.abs(np.degrees(heading[after_turn]) - 90.0) < 20.0), np.degrees(heading[after_turn])
    at_step_start = int(np.searchsorted(t, step.start_s))
    lateral_axis = np.array([-math.sin(heading[at_step_start]), math.cos(heading[at_step_start])])
    sidestep = (recording.odom_p[t >= step.end_s, :2] - recording.odom_p[at_step_start, :2]) @ lateral_axis
    assert np.all(np.abs(sidestep - 0.5) < 0.1), sidestep
    assert recording.odom_p[:, 2].min() > 0.5, recording.odom_p[:, 2].min()  # never fell
    # Arms: the walking pose once the limiter got there (0.01 rad per tick), while walking.
    arms = recording.command_q[:, ARM_INDICES]
    walking = (recording.command_t > locomotion_s + 2.0) & (recording.command_t < squat_requested_s - 0.1)
    assert walking.any() and np.abs(arms[walking] - robot.default_q[ARM_INDICES]).max() < 1e-6
    failures = check_arm_slew(recording, max_step_rad=0.01)
    assert not failures, "\n".join(failures)
    # Back in SQUAT the arms follow the IK again: the last command is the last IK target.
    assert np.abs(arms[-1] - recording.arm_target_q[-1]).max() < 0.02, arms[-1] - recording.arm_target_q[-1]

