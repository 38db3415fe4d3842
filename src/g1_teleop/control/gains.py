"""The joint PD gains a controller wants the bridge to apply with its targets, ROS-free.

A controller states kp (N·m/rad) and kd (N·m·s/rad) for every joint of the robot (DDS order): its own for the
joints it drives, for the others those its configuration gives or the robot's ``default`` gain profile. A
mode switch moves from one controller's gains to the other's over the switch's ticks (:meth:`interpolate`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from g1_teleop.core.robot_description import Robot

DEFAULT_PROFILE = "default"  # the robot's gain profile of the controllers without gains of their own


class JointGains:
    """kp (N·m/rad) and kd (N·m·s/rad), one each per joint of the robot in DDS order, finite and ≥ 0.
    Read-only; equal when every value is."""

    __slots__ = ("kd", "kp")

    def __init__(self, kp: Sequence[float] | np.ndarray, kd: Sequence[float] | np.ndarray) -> None:
        kp_array, kd_array = np.array(kp, dtype=float), np.array(kd, dtype=float)
        if kp_array.ndim != 1 or kp_array.shape != kd_array.shape:
            raise ValueError(f"kp and kd must be vectors of one length, got shapes {kp_array.shape} and "
                             f"{kd_array.shape}")
        if not (np.all(np.isfinite(kp_array)) and np.all(np.isfinite(kd_array))) or min(
                kp_array.min(initial=0.0), kd_array.min(initial=0.0)) < 0:
            raise ValueError("gains must be finite and >= 0")
        kp_array.flags.writeable = kd_array.flags.writeable = False
        self.kp, self.kd = kp_array, kd_array

    @classmethod
    def profile(cls, robot: Robot, name: str = DEFAULT_PROFILE) -> JointGains:
        """A gain profile of the robot description (``gain_profiles`` in its YAML)."""
        return cls(*robot.gains(name))

    def interpolate(self, end: JointGains, fraction: float) -> JointGains:
        """The gains ``fraction`` (0 → these, 1 → ``end``) of the way to ``end``, joint by joint."""
        return JointGains(self.kp + fraction * (end.kp - self.kp), self.kd + fraction * (end.kd - self.kd))

    def above(self, kp_max: np.ndarray, kd_max: np.ndarray) -> list[int]:
        """Indices of the joints whose kp or kd exceeds ``kp_max`` / ``kd_max`` (e.g. the robot's gain_limits)."""
        return np.flatnonzero((self.kp > kp_max) | (self.kd > kd_max)).tolist()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, JointGains):
            return NotImplemented
        return bool(np.array_equal(self.kp, other.kp) and np.array_equal(self.kd, other.kd))

    __hash__ = None  # type: ignore[assignment]  # compared by value

    def __repr__(self) -> str:
        return f"JointGains(kp={self.kp.tolist()}, kd={self.kd.tolist()})"
