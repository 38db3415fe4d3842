"""The operator's joystick, cmd_vel and body → the lower-body controller's commands and mode requests, ROS-free.

Joystick (Xbox layout by default): in SQUAT one axis raises/lowers and one leans forward/back (stick values
in [-1, 1], rates at full stick are the controller's); in LOCOMOTION three axes give vx, vy, wz as a
fraction of the controller's ``max_velocity``. A fresh cmd_vel overrides the sticks' velocity; a fresh squat height
(teleop/squat_height: the operator's pelvis, from body_retarget) overrides the height stick; while walking, a fresh
heading (teleop/heading: the operator's pelvis yaw) overrides the turn rate: the robot turns as the operator does
(control.heading_follower). Pressing a
button requests LOCOMOTION, another SQUAT; a press counts only after the button was released for at least
``button_release_s`` (a chattering or fuzzed button does not flip modes). Joystick input older than
``joy_timeout_s`` counts as sticks released; a cmd_vel, squat height or heading older than ``cmd_vel_timeout_s``
is ignored.
Times are monotonic wall seconds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from g1_teleop.control.heading_follower import HeadingFollower
from g1_teleop.control.lower_body import LowerBodyController
from g1_teleop.core.modes import Mode

REQUESTED_BY_BUTTON = (Mode.LOCOMOTION, Mode.SQUAT)  # the order of JoystickMapping.buttons


@dataclass(frozen=True)
class JoystickSample:
    """One joystick sample (sensor_msgs/Joy): axes in [-1, 1], buttons 0 or 1, received at ``received_s``."""

    axes: tuple[float, ...]
    buttons: tuple[int, ...]
    received_s: float


@dataclass(frozen=True)
class VelocityCommand:
    """One velocity command (geometry_msgs/Twist): vx, vy (m/s) and wz (rad/s) in the robot's frame, received
    at ``received_s``."""

    velocity: tuple[float, float, float]
    received_s: float


@dataclass(frozen=True)
class SquatHeightCommand:
    """A squat height target (m, the pelvis above the floor), received at ``received_s``."""

    height_m: float
    received_s: float


@dataclass(frozen=True)
class HeadingCommand:
    """The operator's heading (rad, yaw about the vertical in their tracking world), received at ``received_s``."""

    yaw_rad: float
    received_s: float


@dataclass(frozen=True)
class JoystickMapping:
    """Axis indices (height, pitch, vx, vy, wz), button indices (request LOCOMOTION, request SQUAT), the
    ages (s) past which joystick and cmd_vel samples no longer count, and how long (s) a button must have been
    released before a press counts again."""

    axes: tuple[int, ...]
    buttons: tuple[int, ...]
    joy_timeout_s: float
    cmd_vel_timeout_s: float
    button_release_s: float = 0.05

    def __post_init__(self) -> None:
        if len(self.axes) != 5 or len(self.buttons) != len(REQUESTED_BY_BUTTON):
            raise ValueError(f"the joystick mapping needs 5 axes (height, pitch, vx, vy, wz) and 2 buttons "
                             f"(LOCOMOTION, SQUAT), got {self.axes} and {self.buttons}")
        if min(*self.axes, *self.buttons) < 0 or not (self.joy_timeout_s > 0 and self.cmd_vel_timeout_s > 0
                                                      and self.button_release_s >= 0):
            raise ValueError("joystick indices must be >= 0, the timeouts > 0 and button_release_s >= 0")


def _pressed(buttons: Sequence[int], index: int) -> bool:
    return index < len(buttons) and buttons[index] != 0


class OperatorCommands:
    """The newest joystick, cmd_vel, squat height and heading samples (finite: their intake checks), turned into a
    controller's commands each tick."""

    def __init__(self, mapping: JoystickMapping, heading_follower: HeadingFollower | None = None) -> None:
        self.mapping = mapping
        self.joy: JoystickSample | None = None
        self.cmd_vel: VelocityCommand | None = None
        self.squat_height: SquatHeightCommand | None = None
        self.heading: HeadingCommand | None = None
        self.heading_follower = heading_follower or HeadingFollower()
        # per mapped button: since when (s) it has been released; None while pressed
        self._released_since: list[float | None] = [float("-inf")] * len(mapping.buttons)
        self.ignored_presses = 0  # presses after too short a release

    def put_joy(self, sample: JoystickSample) -> list[Mode]:
        """Keep ``sample``; the modes whose button it presses after a release of at least ``button_release_s``,
        in the order of :data:`REQUESTED_BY_BUTTON`."""
        self.joy = sample
        requested = []
        for k, (button, mode) in enumerate(zip(self.mapping.buttons, REQUESTED_BY_BUTTON, strict=True)):
            since = self._released_since[k]
            if not _pressed(sample.buttons, button):
                if since is None:
                    self._released_since[k] = sample.received_s
                continue
            if since is None:
                continue  # still held
            self._released_since[k] = None
            if sample.received_s - since >= self.mapping.button_release_s:
                requested.append(mode)
            else:
                self.ignored_presses += 1
        return requested

    def put_cmd_vel(self, command: VelocityCommand) -> None:
        self.cmd_vel = command

    def put_squat_height(self, command: SquatHeightCommand) -> None:
        self.squat_height = command

    def put_heading(self, command: HeadingCommand) -> None:
        self.heading = command

    def apply(self, lower_body: LowerBodyController, now_s: float, robot_yaw_rad: float) -> None:
        """Give ``lower_body`` this tick's squat and velocity commands (non-finite stick values count as 0);
        ``robot_yaw_rad``: the robot's heading now (rad, from its IMU)."""
        m, joy = self.mapping, self.joy
        axes = joy.axes if joy is not None and now_s - joy.received_s <= m.joy_timeout_s else ()

        def axis(i: int) -> float:
            value = axes[i] if i < len(axes) else 0.0
            return float(value) if np.isfinite(value) else 0.0

        height, pitch, vx, vy, wz = m.axes
        target = self.squat_height
        fresh = target is not None and now_s - target.received_s <= m.cmd_vel_timeout_s
        lower_body.command_squat(axis(height), axis(pitch), target.height_m if fresh else None)
        velocity = np.array([axis(vx), axis(vy), axis(wz)]) * lower_body.max_velocity
        if self.cmd_vel is not None and now_s - self.cmd_vel.received_s <= m.cmd_vel_timeout_s:
            velocity = np.array(self.cmd_vel.velocity)
        heading = self.heading
        if lower_body.walking and heading is not None and now_s - heading.received_s <= m.cmd_vel_timeout_s:
            velocity[2] = self.heading_follower.turn_rate(heading.yaw_rad, robot_yaw_rad, lower_body.max_velocity[2],
                                                          lower_body.min_velocity[2])
        else:
            self.heading_follower.release()
        lower_body.command_velocity(*np.nan_to_num(velocity))
