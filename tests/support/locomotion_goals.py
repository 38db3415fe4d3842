"""A goal-seeking operator for LOCOMOTION: body velocity commands from the measured pose until a goal is
reached, as an operator watching the robot would command them; then stop and let the robot settle. ROS-free.

Goals, one after another (world frame z up, headings about z, counter-clockwise positive):

* ``TURN``: turn in place to an absolute world heading (rad);
* ``FORWARD`` / ``LATERAL``: move a signed distance (m) along the pelvis x / y axis of the pose at which
  the goal began, measured as the displacement projected on that axis.

While a goal is active the command acts on the goal's own axis only, with the sign of the remaining
error and the magnitude ``clip(gain · |remaining|, min_speed, max_speed)``: full stick far from the
goal, slowing near it, and never below ``min_speed`` (learned policies ignore small commands, OpenWBT's
below 0.1, so a smaller command would stop the robot short). Once |remaining| < tolerance the command is
zero for ``settle_s`` (the robot stops; it may still coast), and the goal's outcome is the error measured
then. A goal not reached within ``timeout_s`` ends the sequence with the command at zero.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence
from dataclasses import dataclass

from g1_teleop.core.rotations import yaw_from_wxyz


class GoalKind(str, enum.Enum):
    TURN = "turn"
    FORWARD = "forward"
    LATERAL = "lateral"


@dataclass(frozen=True)
class Goal:
    """``target``: world heading (rad) for TURN; signed distance (m) along the start pose's axis otherwise."""

    kind: GoalKind
    target: float

    def __post_init__(self) -> None:
        if not math.isfinite(self.target):
            raise ValueError(f"{self.kind.value} goal: target must be finite, got {self.target}")


@dataclass(frozen=True)
class PlanarPose:
    """Pelvis position on the floor (m, world) and heading (rad, about world z)."""

    x: float
    y: float
    heading: float

    @classmethod
    def from_pose(cls, position: Sequence[float], quat_wxyz: Sequence[float]) -> PlanarPose:
        """From a 3D position and orientation quaternion (w, x, y, z): the yaw of the z-y-x Euler angles."""
        return cls(float(position[0]), float(position[1]), yaw_from_wxyz(quat_wxyz))


@dataclass(frozen=True)
class SeekConfig:
    """Command shaping per axis (linear: m/s, m; angular: rad/s, rad) and timing (s, the pose's clock)."""

    linear_gain: float = 1.0  # 1/s: m/s per m remaining
    angular_gain: float = 1.0  # 1/s: rad/s per rad remaining
    max_linear_speed: float = 0.3  # OpenWBT's full stick
    max_angular_speed: float = 0.3
    min_linear_speed: float = 0.15  # above OpenWBT's 0.1 dead band
    min_angular_speed: float = 0.15
    linear_tolerance_m: float = 0.02
    angular_tolerance_rad: float = 0.03
    settle_s: float = 1.0
    timeout_s: float = 30.0

    def __post_init__(self) -> None:
        for name in ("linear_gain", "angular_gain", "max_linear_speed", "max_angular_speed", "min_linear_speed",
                     "min_angular_speed", "linear_tolerance_m", "angular_tolerance_rad", "timeout_s"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be positive, got {getattr(self, name)}")
        if self.settle_s < 0:
            raise ValueError(f"settle_s must be >= 0, got {self.settle_s}")
        for axis in ("linear", "angular"):
            low, high = getattr(self, f"min_{axis}_speed"), getattr(self, f"max_{axis}_speed")
            if low > high:
                raise ValueError(f"min_{axis}_speed {low} exceeds max_{axis}_speed {high}")


@dataclass(frozen=True)
class GoalOutcome:
    """How one goal went: start pose and time, when it was reached (None: timed out), the remaining error
    (rad or m, signed) after settling, and the time it ended (s)."""

    goal: Goal
    start: PlanarPose
    start_s: float
    reached_s: float | None
    error: float
    end_s: float

    @property
    def reached(self) -> bool:
        return self.reached_s is not None


def wrap_angle(angle: float) -> float:
    """The same angle in [-π, π)."""
    return (angle + math.pi) % (2.0 * math.pi) - math.pi


def remaining(goal: Goal, start: PlanarPose, pose: PlanarPose) -> float:
    """Signed error still to go: rad for TURN, m along the start pose's axis for FORWARD and LATERAL."""
    if goal.kind is GoalKind.TURN:
        return wrap_angle(goal.target - pose.heading)
    dx, dy = pose.x - start.x, pose.y - start.y
    cos_h, sin_h = math.cos(start.heading), math.sin(start.heading)
    if goal.kind is GoalKind.FORWARD:
        return goal.target - (cos_h * dx + sin_h * dy)
    return goal.target - (-sin_h * dx + cos_h * dy)


class GoalSeeker:
    """Feed it the measured pose every control period; it answers the body velocity (vx, vy, wz)."""

    def __init__(self, goals: Sequence[Goal], config: SeekConfig | None = None) -> None:
        if not goals:
            raise ValueError("GoalSeeker needs at least one goal")
        self.goals, self.config = list(goals), config or SeekConfig()
        self.outcomes: list[GoalOutcome] = []
        self._index = 0
        self._start: tuple[float, PlanarPose] | None = None  # (time, pose) at which the current goal began
        self._reached_s: float | None = None
        self._timed_out = False

    @property
    def done(self) -> bool:
        return self._timed_out or self._index >= len(self.goals)

    @property
    def current(self) -> Goal | None:
        return None if self.done else self.goals[self._index]

    def command(self, t_s: float, pose: PlanarPose) -> tuple[float, float, float]:
        """(vx m/s, vy m/s, wz rad/s) in the pelvis frame for the pose measured at ``t_s`` (s)."""
        if self.done:
            return 0.0, 0.0, 0.0
        goal, cfg = self.goals[self._index], self.config
        if self._start is None:
            self._start = (t_s, pose)
        start_s, start = self._start
        error = remaining(goal, start, pose)
        turning = goal.kind is GoalKind.TURN
        tolerance = cfg.angular_tolerance_rad if turning else cfg.linear_tolerance_m
        if self._reached_s is None and abs(error) < tolerance:
            self._reached_s = t_s
        if self._reached_s is not None:  # stopped: settle, then the outcome and the next goal
            if t_s - self._reached_s >= cfg.settle_s:
                self._finish(goal, error, t_s)
            return 0.0, 0.0, 0.0
        if t_s - start_s > cfg.timeout_s:
            self._timed_out = True
            self._finish(goal, error, t_s)
            return 0.0, 0.0, 0.0
        if turning:
            speed = min(max(cfg.angular_gain * abs(error), cfg.min_angular_speed), cfg.max_angular_speed)
            return 0.0, 0.0, math.copysign(speed, error)
        speed = min(max(cfg.linear_gain * abs(error), cfg.min_linear_speed), cfg.max_linear_speed)
        if goal.kind is GoalKind.FORWARD:
            return math.copysign(speed, error), 0.0, 0.0
        return 0.0, math.copysign(speed, error), 0.0

    def _finish(self, goal: Goal, error: float, t_s: float) -> None:
        start_s, start = self._start
        self.outcomes.append(GoalOutcome(goal, start, start_s, self._reached_s, error, t_s))
        self._index += 1
        self._start, self._reached_s = None, None
