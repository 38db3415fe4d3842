"""retarget: the operator's hands → the 14 arm joints.

mode "pose": dual-arm IK from xr/left_wrist, xr/right_wrist (geometry_msgs/PoseStamped, pelvis frame, the
left_ee / right_ee targets), warm-started from joint_states (which also locks the rest of the body), keeping
``min_clearance_m`` between the forearms/hands and the trunk, the thighs and the other arm.
mode "gamepad": joy (sensor_msgs/Joy) → a velocity of each hand → damped-least-squares differential IK,
one step per joint_states sample, for operators without a headset.
Publishes teleop/arm_target (sensor_msgs/JointState: 14 named arm joints, position = target, effort =
gravity feed-forward), stamped with the operator sample it came from (gamepad: the joint state's).
Lockstep: one answer per control period, once that period's inputs are in.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
from geometry_msgs.msg import PoseStamped
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from sensor_msgs.msg import JointState, Joy

from g1_teleop.core.joint_vector import JointIndex, MalformedJointMessage
from g1_teleop.core.mujoco_model import build_mujoco_model
from g1_teleop.core.pinocchio_model import build_pinocchio_model
from g1_teleop.core.robot_description import load_robot
from g1_teleop.core.settings import check_settings, setting
from g1_teleop.core.stamp_sync import StampSync
from g1_teleop.retarget.arm_ik import ArmIKConfig, DualArmIK
from g1_teleop.retarget.gamepad_ik import GamepadArmTeleop, GamepadMapping
from g1_teleop.retarget.self_collision import ArmCollisionModel
from g1_teleop.ros.diagnostics import Diagnostics, WarnOnce
from g1_teleop.ros.messages import joint_state_msg, stamp_ns, to_stamp, transform_from_pose_msg
from g1_teleop.ros.node_main import run
from g1_teleop.ros.parameters import declare_config
from g1_teleop.ros.qos import QOS_COMMAND, QOS_SENSOR, QOS_STATE

MODES = ("pose", "gamepad")


def _setting_of(config: type, name: str) -> Any:
    """A field with the default, description and legal values of the setting ``name`` of the dataclass
    ``config``: a parameter that passes straight to a core configuration is declared once, there."""
    field = next(f for f in dataclasses.fields(config) if f.name == name)
    return dataclasses.field(default=field.default, metadata=field.metadata)


@dataclass(frozen=True)
class RetargetConfig:
    """retarget's ROS parameters (read once at start-up)."""

    model: str = setting("", "robot model file (MJCF .xml or URDF); empty: the one robot_config names")
    robot_config: str = setting("", "robot configuration (YAML); empty: config/g1_29dof.yaml")
    lockstep: bool = setting(True, "one answer per control period, once the period's joint state and wrist poses "
                             "are in; false: an answer per left and right wrist sample of the same stamp")
    sync_timeout_s: float = setting(1.0, "lockstep: wall time to wait for a period's wrist poses before solving "
                                    "with the latest ones (s)", positive=True)
    position_weight: float = _setting_of(ArmIKConfig, "position_weight")
    rotation_weight: float = _setting_of(ArmIKConfig, "rotation_weight")
    posture_weight: float = _setting_of(ArmIKConfig, "posture_weight")
    measured_weight: float = _setting_of(ArmIKConfig, "measured_weight")
    min_clearance_m: float = _setting_of(ArmIKConfig, "min_clearance_m")
    mode: str = setting("pose", "operator input: pose (wrist poses from a headset or a scenario) or gamepad "
                        "(joy sticks → hand velocities)", choices=MODES)
    gamepad_axes: tuple[int, ...] = setting((1, 0, 4, 3), "Joy axes: left forward, left side, right forward, "
                                            "right side", length=4, minimum=0)
    gamepad_up_buttons: tuple[int, ...] = setting((4, 5), "Joy buttons (left, right) that, held, turn the side's "
                                                  "forward axis into up", length=2, minimum=0)
    gamepad_speed_m_s: float = _setting_of(GamepadMapping, "speed_m_s")
    gamepad_deadzone: float = _setting_of(GamepadMapping, "deadzone")
    gamepad_damping: float = setting(0.05, "λ of the gamepad's damped least squares: larger slows the hands near "
                                     "singularities (m/rad)", positive=True)
    gamepad_max_joint_speed: float = setting(2.0, "fastest arm joint motion in gamepad mode (rad/s)", positive=True)
    joy_timeout_s: float = setting(0.5, "joy input older than this counts as sticks released (s)", positive=True)

    def __post_init__(self) -> None:
        check_settings(self)
        self.ik_config()  # and the cross-field checks of the IK and gamepad settings
        self.gamepad_mapping()

    def gamepad_mapping(self) -> GamepadMapping:
        lf, ls, rf, rs = self.gamepad_axes
        return GamepadMapping(left_forward_axis=lf, left_side_axis=ls, left_up_button=self.gamepad_up_buttons[0],
                              right_forward_axis=rf, right_side_axis=rs, right_up_button=self.gamepad_up_buttons[1],
                              speed_m_s=self.gamepad_speed_m_s, deadzone=self.gamepad_deadzone)

    def ik_config(self) -> ArmIKConfig:
        return ArmIKConfig(position_weight=self.position_weight, rotation_weight=self.rotation_weight,
                           posture_weight=self.posture_weight, measured_weight=self.measured_weight,
                           min_clearance_m=self.min_clearance_m)


class Retarget(Node):
    def __init__(self) -> None:
        super().__init__("retarget")
        cfg = self.cfg = declare_config(self, RetargetConfig)
        robot = load_robot(cfg.robot_config or None, cfg.model or None)
        pin_model = build_pinocchio_model(robot, floating_base=False)
        collision = ArmCollisionModel(robot, build_mujoco_model(robot), pin_model)
        self.ik = DualArmIK(pin_model, robot.joint_names, cfg.ik_config(), collision)
        self.joints = JointIndex(robot.joint_names)
        self.inputs = StampSync(["left", "right", "joints"])
        self.warn = WarnOnce(self)
        self.last_output: JointState | None = None
        self.waiting_since: float | None = None
        self.solves = self.failures = 0
        self.pub = self.create_publisher(JointState, "teleop/arm_target", QOS_COMMAND)
        if cfg.mode == "pose":
            self.create_subscription(PoseStamped, "xr/left_wrist", lambda m: self.on_wrist("left", m), QOS_SENSOR)
            self.create_subscription(PoseStamped, "xr/right_wrist", lambda m: self.on_wrist("right", m), QOS_SENSOR)
        else:
            self.gamepad = GamepadArmTeleop(self.ik, cfg.gamepad_mapping(), damping=cfg.gamepad_damping,
                                            max_joint_speed=cfg.gamepad_max_joint_speed)
            self.joy: tuple[float, list[float], list[int]] | None = None  # (received, axes, buttons)
            self.create_subscription(Joy, "joy", self.on_joy, QOS_SENSOR)
        self.create_subscription(JointState, "joint_states", self.on_joint_states, QOS_STATE)
        self.diagnostics = Diagnostics(self, lambda: {"solves": self.solves, "ik_failures": self.failures})
        if cfg.lockstep:
            self.create_timer(0.05, self.on_sync_timeout, clock=Clock(clock_type=ClockType.STEADY_TIME))
        self.get_logger().info(f"dual-arm IK ready on {len(self.ik.arm_joint_names)} arm joints, mode {cfg.mode}")

    def on_wrist(self, side: str, msg: PoseStamped) -> None:
        try:
            pelvis_T_wrist = transform_from_pose_msg(msg)
        except ValueError as exc:
            self.warn(f"pose_{side}", f"ignored xr/{side}_wrist: {exc}; keeping the last target")
            return
        self.inputs.put(side, stamp_ns(msg.header.stamp), pelvis_T_wrist)
        self.try_solve()

    def on_joint_states(self, msg: JointState) -> None:
        try:
            vec = self.joints.parse(msg.name, msg.position, msg.velocity)
        except MalformedJointMessage as exc:
            self.warn(exc.kind, f"ignored joint_states: {exc}")
            return
        stamp = stamp_ns(msg.header.stamp)
        if self.cfg.lockstep and self.last_output is not None and stamp == stamp_ns(self.last_output.header.stamp):
            self.pub.publish(self.last_output)  # the simulator re-published this period: same answer
            return
        if self.cfg.mode == "gamepad":
            self.gamepad_step(stamp, vec.position)
            return
        if stamp != self.inputs.stamp("joints"):
            self.waiting_since = time.monotonic()
        self.inputs.put("joints", stamp, vec.position)
        self.try_solve()

    def on_joy(self, msg: Joy) -> None:
        self.joy = (time.monotonic(), list(msg.axes), list(msg.buttons))

    def gamepad_step(self, stamp: int, q_measured: np.ndarray) -> None:
        """Move the hands by the sticks over the time since the last joint state (released when stale)."""
        previous = self.inputs.stamp("joints")
        self.inputs.put("joints", stamp, q_measured)
        dt = min(max((stamp - previous) / 1e9, 0.0), 0.1) if previous >= 0 else 0.0
        fresh = self.joy is not None and time.monotonic() - self.joy[0] <= self.cfg.joy_timeout_s
        axes, buttons = self.joy[1:] if fresh else ([], [])
        q_arm = self.gamepad.step(q_measured, axes, buttons, dt)
        q_body = q_measured.copy()
        q_body[self.ik.arm_indices] = q_arm
        self.publish(q_arm, self.ik.gravity_torques(q_body), stamp)

    def try_solve(self) -> None:
        left, right = self.inputs.stamp("left"), self.inputs.stamp("right")
        if self.inputs.value("joints") is None or left < 0 or right < 0:
            return
        if self.cfg.lockstep:
            if self.inputs.complete(self.inputs.stamp("joints")):
                self.solve()
        elif left == right:
            self.solve()

    def on_sync_timeout(self) -> None:
        waited = None if self.waiting_since is None else time.monotonic() - self.waiting_since
        if waited is not None and waited > self.cfg.sync_timeout_s and self.inputs.value("left") is not None:
            self.warn("sync", f"no wrist sample for t = {self.inputs.stamp('joints') / 1e9:.3f} s within "
                              f"{self.cfg.sync_timeout_s} s: is xr_input running? Using the latest wrists")
            self.solve()

    def solve(self) -> None:
        self.waiting_since = None
        result = self.ik.solve(self.inputs.value("left"), self.inputs.value("right"), self.inputs.value("joints"))
        self.solves += 1
        if not result.ok:
            self.failures += 1
            self.warn("ik", "IK failed (unusable target, or no collision-free pose found from the measured one): "
                            "holding the measured arm joints")
        self.publish(result.q_arm, result.tau_ff, max(self.inputs.stamp("left"), self.inputs.stamp("right")))

    def publish(self, q_arm: np.ndarray, tau_ff: np.ndarray, stamp: int) -> None:
        msg = joint_state_msg(self.ik.arm_joint_names, to_stamp(stamp), q_arm, effort=tau_ff)
        msg.header.frame_id = "pelvis"
        self.pub.publish(msg)
        self.last_output = msg


def main(args: list[str] | None = None) -> None:
    run(Retarget, args)


if __name__ == "__main__":
    main()
