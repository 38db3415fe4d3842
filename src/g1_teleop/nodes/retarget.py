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

import time
from dataclasses import dataclass

import numpy as np
from geometry_msgs.msg import PoseStamped
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from scipy.spatial.transform import Rotation
from sensor_msgs.msg import JointState, Joy

from g1_teleop.core.joint_vector import JointIndex, MalformedJointMessage
from g1_teleop.core.mujoco_model import build_mujoco_model
from g1_teleop.core.pinocchio_model import build_pinocchio_model
from g1_teleop.core.robot_description import load_robot
from g1_teleop.core.stamp_sync import StampSync
from g1_teleop.retarget.arm_ik import ArmIKConfig, DualArmIK
from g1_teleop.retarget.gamepad_ik import GamepadArmTeleop, GamepadMapping
from g1_teleop.retarget.self_collision import ArmCollisionModel
from g1_teleop.ros.diagnostics import Diagnostics, WarnOnce
from g1_teleop.ros.messages import stamp_ns, to_stamp
from g1_teleop.ros.node_main import run
from g1_teleop.ros.parameters import declare_config
from g1_teleop.ros.qos import QOS_COMMAND, QOS_SENSOR, QOS_STATE


@dataclass(frozen=True)
class RetargetConfig:
    model: str = ""
    robot_config: str = ""
    lockstep: bool = True
    sync_timeout_s: float = 1.0  # lockstep: wall seconds to wait for a period's joint state
    # IK objective weights; defaults from ArmIKConfig (the one place they are chosen and explained).
    position_weight: float = ArmIKConfig.position_weight
    rotation_weight: float = ArmIKConfig.rotation_weight
    posture_weight: float = ArmIKConfig.posture_weight
    measured_weight: float = ArmIKConfig.measured_weight
    min_clearance_m: float = ArmIKConfig.min_clearance_m  # arms vs trunk, thighs and each other
    mode: str = "pose"  # pose (headset or scenario wrist poses) | gamepad (joy → hand velocities)
    gamepad_axes: tuple[int, ...] = (1, 0, 4, 3)  # left forward, left side, right forward, right side
    gamepad_up_buttons: tuple[int, ...] = (4, 5)  # held: the side's forward axis moves the hand up
    gamepad_speed_m_s: float = 0.15
    gamepad_deadzone: float = 0.1
    gamepad_damping: float = 0.05  # λ of the damped least squares
    gamepad_max_joint_speed: float = 2.0  # rad/s
    joy_timeout_s: float = 0.5  # older joy input counts as sticks released

    def gamepad_mapping(self) -> GamepadMapping:
        if len(self.gamepad_axes) != 4 or len(self.gamepad_up_buttons) != 2:
            raise ValueError("gamepad_axes needs 4 indices and gamepad_up_buttons 2")
        lf, ls, rf, rs = self.gamepad_axes
        return GamepadMapping(left_forward_axis=lf, left_side_axis=ls, left_up_button=self.gamepad_up_buttons[0],
                              right_forward_axis=rf, right_side_axis=rs, right_up_button=self.gamepad_up_buttons[1],
                              speed_m_s=self.gamepad_speed_m_s, deadzone=self.gamepad_deadzone)

    def ik_config(self) -> ArmIKConfig:
        return ArmIKConfig(position_weight=self.position_weight, rotation_weight=self.rotation_weight,
                           posture_weight=self.posture_weight, measured_weight=self.measured_weight,
                           min_clearance_m=self.min_clearance_m)

    def __post_init__(self) -> None:
        self.ik_config()
        self.gamepad_mapping()
        if self.mode not in ("pose", "gamepad"):
            raise ValueError(f"mode must be pose or gamepad, got {self.mode!r}")
        for name in ("sync_timeout_s", "joy_timeout_s", "gamepad_damping", "gamepad_max_joint_speed"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be positive, got {getattr(self, name)}")


def pose_to_matrix(msg: PoseStamped) -> np.ndarray:
    """4x4 homogeneous transform of a pose; ValueError if it is not finite or the quaternion not unit."""
    p, o = msg.pose.position, msg.pose.orientation
    values = np.array([p.x, p.y, p.z, o.x, o.y, o.z, o.w])
    if not np.all(np.isfinite(values)):
        raise ValueError("non-finite values (NaN or inf) in the pose")
    norm = np.linalg.norm(values[3:])
    if abs(norm - 1.0) > 1e-3:
        raise ValueError(f"orientation quaternion has norm {norm:.4f}, expected 1")
    T = np.eye(4)
    T[:3, :3] = Rotation.from_quat(values[3:] / norm).as_matrix()
    T[:3, 3] = values[:3]
    return T


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
            pelvis_T_wrist = pose_to_matrix(msg)
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
        msg = JointState(name=list(self.ik.arm_joint_names), position=q_arm.tolist(), effort=tau_ff.tolist())
        msg.header.stamp = to_stamp(stamp)
        msg.header.frame_id = "pelvis"
        self.pub.publish(msg)
        self.last_output = msg


def main(args: list[str] | None = None) -> None:
    run(Retarget, args)


if __name__ == "__main__":
    main()
