"""retarget's clutch holds, then homes, when the operator's samples stop — also when the last sample that came had one
wrist only (over a lossy link, as test_two_hosts found: with its other wrist lost, retarget had stopped answering
altogether, and the policy held the arms after 0.5 s without the clutch ever holding or homing).

retarget runs alone in real time (clutch auto); this test plays the robot (joint_states at 100 Hz) and the operator
(wrist pairs at 60 Hz, then one left wrist alone, then nothing) over DDS.
"""

from __future__ import annotations

import time

import pytest
import rclpy
from geometry_msgs.msg import PoseStamped
from rclpy.executors import SingleThreadedExecutor
from sensor_msgs.msg import JointState
from std_msgs.msg import String

from g1_teleop.core.robot_description import load_robot
from g1_teleop.core.rotations import wxyz_from_rpy
from g1_teleop.launching.graph_description import NodeSpec
from g1_teleop.launching.process_runner import GraphProcesses
from g1_teleop.ros.messages import joint_state_msg, to_stamp
from g1_teleop.ros.qos import QOS_LATCHED, QOS_OBSERVER, QOS_SENSOR, QOS_STATE

pytestmark = pytest.mark.integration

# the default scenario's start pose (config/scenarios/default.yaml): position (m), roll, pitch, yaw (rad)
WRISTS = {"left": ((0.1338, 0.2624, -0.0774), (0.5201, 0.9338, 0.4313)),
          "right": ((0.1338, -0.2624, -0.0774), (-0.5201, 0.9338, -0.4313))}
HOLD_AFTER_S, HOME_AFTER_S = 0.2, 2.0  # the clutch's defaults (README, "The operator clutch")


def wrist_msg(side: str, stamp_ns: int) -> PoseStamped:
    (x, y, z), rpy = WRISTS[side]
    w, qx, qy, qz = wxyz_from_rpy(*rpy)
    msg = PoseStamped()
    msg.header.stamp, msg.header.frame_id = to_stamp(stamp_ns), "pelvis"
    msg.pose.position.x, msg.pose.position.y, msg.pose.position.z = x, y, z
    o = msg.pose.orientation
    o.w, o.x, o.y, o.z = w, qx, qy, qz
    return msg


def test_the_clutch_holds_then_homes_after_a_last_sample_with_one_wrist(ros_domain):
    robot = load_robot()
    lines: list[str] = []
    graph = GraphProcesses([NodeSpec("retarget", "retarget", True, {"lockstep": False, "source": "scenario"})],
                           output=lines.append)
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=ros_domain)
    node = rclpy.create_node("robot_and_operator", context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    states = node.create_publisher(JointState, "joint_states", QOS_STATE)
    wrists = {side: node.create_publisher(PoseStamped, f"xr/{side}_wrist", QOS_SENSOR) for side in WRISTS}
    clutch: list[tuple[float, str]] = []
    targets: list[float] = []
    pairs: list[float] = []  # time.monotonic() of each complete pair sent: the clutch counts from the last one
    node.create_subscription(String, "teleop/clutch", lambda m: clutch.append((time.monotonic(), m.data)), QOS_LATCHED)
    node.create_subscription(JointState, "teleop/arm_target", lambda _: targets.append(time.monotonic()), QOS_OBSERVER)

    def run(seconds: float, operator: bool) -> None:
        """joint_states at 100 Hz and (``operator``) wrist pairs at 60 Hz, stamped now, for ``seconds``."""
        end, next_state, next_sample = time.monotonic() + seconds, 0.0, 0.0
        while time.monotonic() < end:
            now = time.monotonic()
            if now >= next_state:
                states.publish(joint_state_msg(robot.joint_names, to_stamp(time.time_ns()), robot.default_q,
                                               velocity=[0.0] * len(robot.joint_names)))
                next_state = now + 0.01
            if operator and now >= next_sample:
                stamp = time.time_ns()
                for side, pub in wrists.items():
                    pub.publish(wrist_msg(side, stamp))
                pairs.append(now)
                next_sample = now + 1 / 60
            executor.spin_once(timeout_sec=0.002)
            assert graph.check() is None, "\n".join(lines[-20:])

    graph.start()
    try:
        deadline = time.monotonic() + 60.0
        while not (clutch and clutch[-1][1] == "engaged"):  # retarget up, the pairs followed
            assert time.monotonic() < deadline, (clutch, "\n".join(lines[-20:]))
            run(0.5, operator=True)
        run(1.0, operator=True)
        wrists["left"].publish(wrist_msg("left", time.time_ns()))  # the last sample: its right wrist lost
        stopped = pairs[-1]  # the last complete pair
        run(HOME_AFTER_S + 1.5, operator=False)
    finally:
        graph.stop()
        executor.shutdown()
        node.destroy_node()
        context.try_shutdown()

    after = [(t - stopped, state) for t, state in clutch if t > stopped]
    assert [state for _, state in after][:2] == ["holding", "homing"], (after, "\n".join(lines[-20:]))
    (held_s, _), (homed_s, _) = after[:2]
    assert HOLD_AFTER_S <= held_s < HOLD_AFTER_S + 0.3 and HOME_AFTER_S <= homed_s < HOME_AFTER_S + 0.5, after
    answered = [t - stopped for t in targets if t > stopped]
    assert answered and answered[-1] > HOME_AFTER_S + 1.0, "retarget stopped answering the joint states"
