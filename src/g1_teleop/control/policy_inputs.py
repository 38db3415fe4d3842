"""The policy's inputs as they come off the wire, ROS-free: each message's fields are checked and taken, or
refused with one reason (:class:`RefusedInput`: ``kind`` is "topic/check", for once-only warnings).

joint_states: all 29 joints named, finite, with velocities, and plausible (state_checks); imu: plausible;
teleop/arm_target: the 14 arm joints named, and the 3 waist joints or none, finite (effort: gravity feed-forward
of the arms, absent → 0); joy and cmd_vel
(operator_commands; a button press counts after a release); teleop/mode_request: a mode's name. What is
taken goes to the tick's inputs (tick_inputs). Times: monotonic wall seconds; stamps: integer ns.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from g1_teleop.control.operator_commands import (
    HeadingCommand,
    JoystickMapping,
    JoystickSample,
    OperatorCommands,
    SquatHeightCommand,
    VelocityCommand,
)
from g1_teleop.control.state_checks import ImplausibleState, PlausibilityLimits, StateChecks
from g1_teleop.control.tick_inputs import ArmTarget, ImuSample, JointSample, TickInputs
from g1_teleop.core.joint_vector import JointIndex, MalformedJointMessage
from g1_teleop.core.modes import Mode
from g1_teleop.core.robot_description import Robot


class RefusedInput(ValueError):
    """A message the policy does not take; ``kind`` is "topic/check"."""

    def __init__(self, kind: str, reason: str) -> None:
        super().__init__(reason)
        self.kind = kind


class PolicyInputs:
    def __init__(self, robot: Robot, tick_inputs: TickInputs, mapping: JoystickMapping,
                 plausibility: PlausibilityLimits | None = None) -> None:
        self.joints = JointIndex(robot.joint_names)
        self.arm_joints = JointIndex(robot.group_names("arms"))
        self.upper_joints = JointIndex([*robot.group_names("arms"), *robot.group_names("waist")])
        self.tick = tick_inputs
        self.tick.checks = StateChecks(robot.q_lower, robot.q_upper, robot.velocity_limit, plausibility)
        self.operator = OperatorCommands(mapping)

    def joint_state(self, names: Sequence[str], position: Sequence[float], velocity: Sequence[float], stamp_ns: int,
                    now_s: float, now_stamp_ns: int | None = None) -> None:
        """Take a joint state (``now_stamp_ns``: the clock its stamp must be near; None: not compared)."""
        try:
            vec = self.joints.parse(names, position, velocity, need_velocity=True)
            assert vec.velocity is not None  # need_velocity
            self.tick.put_joints(stamp_ns, JointSample(vec.position, vec.velocity, now_s), now_stamp_ns)
        except (MalformedJointMessage, ImplausibleState) as exc:
            raise RefusedInput(f"joint_states/{exc.kind}", f"ignored joint_states: {exc}; the last plausible one is "
                                                           "kept") from None

    def imu(self, quat_wxyz: np.ndarray, gyro: np.ndarray, stamp_ns: int, now_s: float,
            now_stamp_ns: int | None = None) -> None:
        try:
            self.tick.put_imu(stamp_ns, ImuSample(quat_wxyz, gyro), now_s, now_stamp_ns)
        except ImplausibleState as exc:
            raise RefusedInput(f"imu/{exc.kind}", f"ignored imu: {exc}; the last plausible sample is kept") from None

    def arm_target(self, names: Sequence[str], position: Sequence[float], velocity: Sequence[float],
                   effort: Sequence[float], stamp_ns: int, now_s: float) -> None:
        arms = len(self.arm_joints)
        try:
            index = self.upper_joints if len(names) == len(self.upper_joints) else self.arm_joints
            vec = index.parse(names, position, velocity, effort)
        except MalformedJointMessage as exc:
            raise RefusedInput(f"arm_target/{exc.kind}", f"ignored teleop/arm_target: {exc} (the 14 arm joints, "
                                                         "and the 3 waist joints or none); the arms keep their "
                                                         "last target") from None
        tau = np.zeros(arms) if vec.effort is None else vec.effort[:arms]
        waist = vec.position[arms:] if index is self.upper_joints else None
        self.tick.put_arm(ArmTarget(stamp_ns, vec.position[:arms], tau, now_s, waist))

    def joy(self, axes: Sequence[float], buttons: Sequence[int], now_s: float) -> list[Mode]:
        """Take a joystick sample; the modes its buttons request."""
        return self.operator.put_joy(JoystickSample(tuple(axes), tuple(buttons), now_s))

    def cmd_vel(self, vx: float, vy: float, wz: float, now_s: float) -> None:
        self.operator.put_cmd_vel(VelocityCommand((vx, vy, wz), now_s))

    def squat_height(self, height_m: float, now_s: float) -> None:
        """A squat height target (m) from the operator's body; a non-finite one is refused."""
        if not np.isfinite(height_m):
            raise RefusedInput("squat_height/non_finite", f"teleop/squat_height {height_m} is not finite")
        self.operator.put_squat_height(SquatHeightCommand(float(height_m), now_s))

    def heading(self, yaw_rad: float, now_s: float) -> None:
        """The operator's heading (rad) from their body; a non-finite one is refused."""
        if not np.isfinite(yaw_rad):
            raise RefusedInput("heading/non_finite", f"teleop/heading {yaw_rad} is not finite")
        self.operator.put_heading(HeadingCommand(float(yaw_rad), now_s))

    @staticmethod
    def mode_request(text: str) -> Mode:
        """The mode a teleop/mode_request names (case and surrounding blanks ignored)."""
        try:
            return Mode(text.strip().upper())
        except ValueError:
            raise RefusedInput("mode_request/name", f"teleop/mode_request {text[:40]!r} is not one of "
                                                    f"{[m.value for m in Mode]}") from None
