"""The operator's heading → the robot's turn rate while walking, ROS-free.

The operator turns their body; the robot turns as much. On engagement (the first heading while walking) the
follower keeps the offset between the two headings, so neither needs to point anywhere in particular; then the
turn rate is proportional to the heading error ``operator + offset − robot`` (wrapped to [−π, π]) beyond a
deadband, at least the smallest rate the controller acts on (OpenWBT's locomotion policy ignores |wz| < 0.1
rad/s: a proportional rate alone left the robot 0.11 rad short) and within its full-stick rate. Headings are yaws
about the vertical (rad): the operator's in their tracking world, the robot's from its IMU, which drifts slowly (the
offset absorbs what it drifted before engagement). Releasing (a stale heading, or leaving LOCOMOTION) forgets the
offset.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class HeadingFollowerConfig:
    """``gain_per_s``: turn rate (rad/s) per rad of heading error; ``deadband_rad``: an error this small asks for
    no turn (the operator sways)."""

    gain_per_s: float = 1.5
    deadband_rad: float = 0.05

    def __post_init__(self) -> None:
        if not (self.gain_per_s > 0 and self.deadband_rad >= 0):
            raise ValueError(f"heading follower: gain_per_s must be > 0 and deadband_rad >= 0, got "
                             f"{self.gain_per_s} and {self.deadband_rad}")


class HeadingFollower:
    """See the module docstring."""

    def __init__(self, config: HeadingFollowerConfig | None = None) -> None:
        self.config = config or HeadingFollowerConfig()
        self.offset_rad: float | None = None
        """robot heading − operator heading at engagement (rad); None: not engaged."""

    def release(self) -> None:
        self.offset_rad = None

    def turn_rate(self, operator_yaw_rad: float, robot_yaw_rad: float, max_rate_rad_s: float,
                  min_rate_rad_s: float = 0.0) -> float:
        """The turn rate (rad/s, counter-clockwise positive) that brings the robot's heading to the operator's:
        0 within the deadband, else between ``min_rate_rad_s`` and ``max_rate_rad_s`` in size."""
        if self.offset_rad is None:
            self.offset_rad = math.remainder(robot_yaw_rad - operator_yaw_rad, math.tau)
        error = math.remainder(operator_yaw_rad + self.offset_rad - robot_yaw_rad, math.tau)
        beyond = abs(error) - self.config.deadband_rad
        if beyond <= 0.0:
            return 0.0
        return math.copysign(min(max(self.config.gain_per_s * beyond, min_rate_rad_s), max_rate_rad_s), error)
