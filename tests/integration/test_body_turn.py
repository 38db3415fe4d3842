"""body_turn:=true: the walking robot turns as the operator does. The simulated graph with OpenWBT's policies (no
gantry) plays a body stream through xr_input (source body) and body_retarget: the operator stands still for the
calibration, then turns 0.6 rad to the left and stands again. This test, as the operator's gamepad, asks for
LOCOMOTION first; the robot's odometry must turn by the operator's angle (within the follower's deadband and the
policy's tracking) and then stop, with no cmd_vel and no stick."""

from __future__ import annotations

import math
import time
from pathlib import Path

import numpy as np
import pytest
from nav_msgs.msg import Odometry
from rclpy.executors import SingleThreadedExecutor
from std_srvs.srv import Trigger

from g1_teleop.control.heading_follower import HeadingFollowerConfig
from g1_teleop.core.rotations import wxyz_from_rpy, yaw_from_wxyz
from g1_teleop.launching.graph_description import load_graph
from g1_teleop.launching.process_runner import GraphProcesses
from g1_teleop.operator.body_stream import BodyStream, save_body_stream
from g1_teleop.retarget.whole_body import WholeBodyRetargeter
from g1_teleop.retarget.whole_body_motion import RobotMotion, body_frames, demo_motion
from g1_teleop.ros.messages import stamp_ns
from g1_teleop.tools.run_recorder import Recorder

pytestmark = pytest.mark.integration

POLICIES = Path(__file__).resolve().parents[3] / "shared" / "policies" / "openwbt"
RATE_HZ = 15.0
TURN_RAD, TURN_START_S, TURN_S, END_S = 0.6, 3.0, 2.0, 9.0


def turning_stream(robot, path: Path) -> np.ndarray:
    """A body stream of the G1 standing (its first 3 s: the calibration), turning TURN_RAD about the vertical
    over TURN_S, then standing; returns the operator's heading (rad) per frame."""
    retargeter = WholeBodyRetargeter(robot)
    standing = demo_motion(retargeter, RATE_HZ)  # its first frame stands on the floor
    stamps = np.arange(0.0, END_S, 1.0 / RATE_HZ)
    progress = np.clip((stamps - TURN_START_S) / TURN_S, 0.0, 1.0)
    yaw = TURN_RAD * (1.0 - np.cos(math.pi * progress)) / 2.0
    motion = RobotMotion(stamps, np.tile(standing.base_position[0], (stamps.size, 1)),
                         np.array([wxyz_from_rpy(0.0, 0.0, float(a)) for a in yaw]),
                         np.tile(standing.joints[0], (stamps.size, 1)))
    save_body_stream(path, BodyStream(stamps, *body_frames(retargeter, motion)))
    return yaw


def test_the_walking_robot_turns_as_the_operator_turns(rclpy_context, robot, tmp_path):
    if not (POLICIES / "loco.onnx").is_file():
        pytest.skip(f"OpenWBT policies not found at {POLICIES}: the reference data is not beside the repo")
    stream = tmp_path / "turn.npz"
    operator_yaw = turning_stream(robot, stream)
    lines: list[str] = []
    graph = GraphProcesses(load_graph("sim").resolve(
        {"controller": "openwbt", "policy_dir": str(POLICIES), "gantry": "false", "source": "body",
         "body_stream": str(stream), "body_turn": "true", "wait_for_start": "true"}), output=lines.append)
    graph.start()
    recorder = Recorder(robot.joint_names, node_name="test_recorder", context=rclpy_context)
    executor = SingleThreadedExecutor(context=rclpy_context)
    executor.add_node(recorder)
    locomotion = recorder.create_client(Trigger, "teleop/locomotion")
    odom_t: list[float] = []
    recorder.create_subscription(Odometry, "odom", lambda m: odom_t.append(stamp_ns(m.header.stamp) / 1e9), 10)

    def spin(until, timeout_s: float = 90.0) -> None:
        deadline = time.monotonic() + timeout_s
        while not until():
            assert time.monotonic() < deadline, "timed out:\n" + "\n".join(lines[-40:])
            assert not graph.check(), graph.failure + "\n" + "\n".join(lines[-40:])
            executor.spin_once(timeout_sec=0.02)

    try:
        spin(lambda: not recorder.publishers_missing() and locomotion.service_is_ready(), timeout_s=60.0)
        future = locomotion.call_async(Trigger.Request())  # before the stream starts: walking from the start
        spin(future.done, timeout_s=10.0)
        assert future.result().success, future.result().message
        recorder.start_simulation()
        spin(lambda: odom_t and odom_t[-1] > END_S + 2.0)
        assert sorted(graph.alive()) == sorted(n.name for n in graph.nodes), "\n".join(lines[-40:])
    finally:
        graph.stop()
        executor.shutdown()
        recording = recorder.recording()
        recorder.destroy_node()

    log = "\n".join(lines)
    assert "body_retarget]: calibrated" in log, log[-3000:]
    t, heading = recording.odom_t, np.unwrap([yaw_from_wxyz(q) for q in recording.odom_q])
    turned = heading - np.interp(TURN_START_S, t, heading)
    before, after = t < TURN_START_S, t > TURN_START_S + TURN_S + 2.5
    deadband = HeadingFollowerConfig().deadband_rad
    print(f"\nrobot heading before the operator turns {np.abs(turned[before]).max():.3f} rad from its start; "
          f"{TURN_S + 2.5:.1f} s after the operator's {operator_yaw[-1]:.2f} rad turn: "
          f"{turned[after].min():.3f}…{turned[after].max():.3f} rad")
    assert np.abs(turned[before]).max() < 0.05  # walking in place, the heading held
    assert after.any() and np.all(np.abs(turned[after] - TURN_RAD) < deadband + 0.06), turned[after]
    assert recording.odom_p[:, 2].min() > 0.5, recording.odom_p[:, 2].min()  # never fell
