"""body_retarget: the operator's whole body (xr/body) → the waist and arm targets; the legs stay with the policy.

Subscribes xr/body (geometry_msgs/PoseArray: the 24 body points of xr_input's source body, XRobot's order, operator
world; g1_teleop.ros.operator_messages) and joint_states. Retargets each body frame by GMR's method with a
standing calibration (g1_teleop.retarget.body_follower) and publishes teleop/arm_target (sensor_msgs/JointState:
the 14 arm joints and, once calibrated, the 3 waist joints, named; position = target, effort = the arms' gravity
feed-forward) stamped with the body frame's stamp; the policy's lower-body controller takes the waist targets
within its own limits (control.standing_controller). While calibrating (the operator stands still for
``calibration_s``) the arms hold where they were measured first. Lockstep: a body frame is answered once the joint
state of its stamp is in (the simulation waits for it); real time: each body frame at once, with the latest joints.
A malformed body frame is refused with one warning per kind; without body frames nothing is published and the
policy holds the arms after its arm_target_timeout_s. With ``squat`` it also publishes teleop/squat_height
(std_msgs/Float32, m): the retargeted robot's pelvis height, the operator's own scaled by the calibration, which the
policy's squat height follows at its full-stick rate instead of the height stick (control.operator_commands). With
``turn`` it publishes teleop/heading (std_msgs/Float32, rad): the retargeted pelvis's yaw in the operator's world,
which the walking robot's heading follows (control.heading_follower). Once calibrated, for tools (the policy takes
none of them), each answer's whole robot (g1_teleop.ros.body_messages, frame retarget_world: not in the TF tree):
teleop/body_configuration (sensor_msgs/JointState, the 29 joints, legs included), teleop/body_base
(geometry_msgs/PoseStamped, the pelvis) and teleop/body_links (geometry_msgs/PoseArray, the tracked links in
whole_body_config's order), stamped with the body frame's stamp, each only while subscribed.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from geometry_msgs.msg import PoseArray, PoseStamped
from rclpy.node import Node
from rclpy.publisher import Publisher
from sensor_msgs.msg import JointState
from std_msgs.msg import Float32

from g1_teleop.core.dex3_description import dex3_setting, load_dex3
from g1_teleop.core.joint_vector import JointIndex, MalformedJointMessage
from g1_teleop.core.mujoco_model import build_mujoco_model
from g1_teleop.core.pinocchio_model import build_pinocchio_model
from g1_teleop.core.robot_description import load_robot
from g1_teleop.core.settings import setting
from g1_teleop.core.stamp_sync import StampSync
from g1_teleop.retarget.arm_chains import ArmChains
from g1_teleop.retarget.arm_ik_config import ArmIKConfig
from g1_teleop.retarget.body_follower import BodyFollower, UpperBodyTarget
from g1_teleop.retarget.gravity_feedforward import ArmGravity
from g1_teleop.retarget.whole_body import WholeBodyRetargeter
from g1_teleop.retarget.whole_body_config import WholeBodyConfig
from g1_teleop.ros.body_messages import WholeBodyMessages
from g1_teleop.ros.diagnostics import Diagnostics, WarnOnce
from g1_teleop.ros.messages import joint_state_msg, stamp_ns, to_stamp
from g1_teleop.ros.node_main import run
from g1_teleop.ros.operator_messages import body_from_msg
from g1_teleop.ros.parameters import declare_config
from g1_teleop.ros.qos import QOS_COMMAND, QOS_SENSOR, QOS_STATE


@dataclass(frozen=True)
class BodyRetargetConfig(WholeBodyConfig):
    """body_retarget's ROS parameters (read once at start-up): the whole-body retargeting's and the node's own."""

    model: str = setting("", "robot model, a URDF or MJCF path; empty: the project's model")
    robot_config: str = setting("", "robot description YAML; empty: config/g1_29dof.yaml")
    dex3: bool = dex3_setting()
    lockstep: bool = setting(True, "answer a body frame once the joint state of its stamp is in; false: at once")
    squat: bool = setting(False, "publish teleop/squat_height, the operator's pelvis height scaled to the robot: "
                          "the policy squats as the operator does")
    turn: bool = setting(False, "publish teleop/heading, the operator's pelvis yaw: the walking robot turns as the "
                         "operator does")


class BodyRetarget(Node):
    def __init__(self) -> None:
        super().__init__("body_retarget")
        cfg = self.cfg = declare_config(self, BodyRetargetConfig)
        robot = self.robot = load_robot(cfg.robot_config or None, cfg.model or None)
        pin_model = build_pinocchio_model(robot, floating_base=False, hands=load_dex3() if cfg.dex3 else None)
        ik_frames = ArmIKConfig()
        chains = ArmChains(pin_model, robot.joint_names, (ik_frames.left_frame, ik_frames.right_frame))
        gravity = ArmGravity(chains)
        retargeter = WholeBodyRetargeter(robot, cfg, mj_model=build_mujoco_model(robot))
        self.follower = BodyFollower(robot, retargeter, lambda q: gravity.torques(chains.full_q(q)))
        self.arm_names = robot.group_names("arms")
        self.upper_names = [*self.arm_names, *robot.group_names("waist")]
        self.joints = JointIndex(robot.joint_names)
        self.inputs = StampSync(["body", "joints"])
        self.warn = WarnOnce(self)
        self.frames = self.unconverged = 0
        self.answered = -1  # the stamp (ns) of the last body frame answered
        self.last_output: list[tuple[Publisher, Any]] = []  # (publisher, message) of that answer
        self.reported_problem: str | None = None
        self.announced = False
        self.pub = self.create_publisher(JointState, "teleop/arm_target", QOS_COMMAND)
        self.pub_squat = self.create_publisher(Float32, "teleop/squat_height", QOS_COMMAND) if cfg.squat else None
        self.pub_heading = self.create_publisher(Float32, "teleop/heading", QOS_COMMAND) if cfg.turn else None
        body = WholeBodyMessages(robot.joint_names, retargeter.links)  # (publisher, message builder) for tools
        self.body_outputs = [(self.create_publisher(JointState, "teleop/body_configuration", QOS_COMMAND),
                              body.configuration),
                             (self.create_publisher(PoseStamped, "teleop/body_base", QOS_COMMAND), body.base),
                             (self.create_publisher(PoseArray, "teleop/body_links", QOS_COMMAND), body.links)]
        self.create_subscription(PoseArray, "xr/body", self.on_body, QOS_SENSOR)
        self.create_subscription(JointState, "joint_states", self.on_joint_states, QOS_STATE)
        self.diagnostics = Diagnostics(self, lambda: {"frames": self.frames, "calibrated": self.follower.calibrated,
                                                      "unconverged": self.unconverged})
        self.get_logger().info(f"whole-body retargeting ready ({len(retargeter.links)} tracked links); the operator "
                               f"stands still for {cfg.calibration_s:g} s to calibrate")

    def on_body(self, msg: PoseArray) -> None:
        try:
            body = body_from_msg(msg)
        except ValueError as exc:
            self.warn("body", f"ignored xr/body: {exc}")
            return
        self.inputs.put("body", stamp_ns(msg.header.stamp), body)
        self.try_answer()

    def on_joint_states(self, msg: JointState) -> None:
        try:
            q = self.joints.parse(msg.name, msg.position).position
        except MalformedJointMessage as exc:
            self.warn(exc.kind, f"ignored joint_states: {exc}")
            return
        stamp = stamp_ns(msg.header.stamp)
        if self.cfg.lockstep and stamp == self.answered:
            for publisher, message in self.last_output:  # the simulator re-published this period: same answer
                publisher.publish(message)  # (a first answer sent before the policy had matched is not lost)
            return
        self.inputs.put("joints", stamp, q)
        if self.cfg.lockstep:
            self.try_answer()

    def try_answer(self) -> None:
        """Lockstep: once body and joints share a stamp (each stamp once); real time: each new body frame."""
        stamp = self.inputs.stamp("body")
        if self.inputs.value("joints") is None or stamp < 0 or stamp == self.answered:
            return
        if self.cfg.lockstep and not self.inputs.complete(stamp):
            return
        self.answered = stamp
        positions, quat = self.inputs.value("body")
        started = time.monotonic()
        target = self.follower.put(stamp / 1e9, positions, quat, self.inputs.value("joints"))
        self.frames += 1
        self.unconverged += not target.converged
        self.report(time.monotonic() - started)
        for publisher, build in self.body_outputs if target.frame is not None else ():
            if publisher.get_subscription_count():  # for tools: built only when wanted, once per answer
                publisher.publish(build(target.frame, to_stamp(stamp)))
        self.publish(target, stamp)

    def report(self, solve_s: float) -> None:
        problem = self.follower.problem
        if problem != self.reported_problem and problem is not None:
            self.get_logger().warning(f"calibration refused: {problem}")
        self.reported_problem = problem
        if self.follower.calibrated and not self.announced:
            self.announced = True
            scales = self.follower.retargeter.calibration
            self.get_logger().info(f"calibrated: operator {scales.height_ratio * 1.8:.2f} m tall by GMR's table; the "
                                   f"waist and arms follow the body (a frame took {solve_s * 1e3:.1f} ms)")

    def publish(self, target: UpperBodyTarget, stamp: int) -> None:
        names, q, tau = self.arm_names, target.arm_q, target.arm_tau_ff
        if target.waist_q is not None:
            names, q = self.upper_names, [*q, *target.waist_q]
            tau = [*tau, 0.0, 0.0, 0.0]
        msg = joint_state_msg(names, to_stamp(stamp), q, effort=tau)
        msg.header.frame_id = "pelvis"
        self.last_output = [(self.pub, msg)]
        if self.pub_squat is not None and target.pelvis_height_m is not None:
            self.last_output.append((self.pub_squat, Float32(data=target.pelvis_height_m)))
        if self.pub_heading is not None and target.pelvis_yaw_rad is not None:
            self.last_output.append((self.pub_heading, Float32(data=target.pelvis_yaw_rad)))
        for publisher, message in reversed(self.last_output):  # the arm target last: it starts the policy's tick
            publisher.publish(message)


def main(args: list[str] | None = None) -> None:
    run(BodyRetarget, args)


if __name__ == "__main__":
    main()
