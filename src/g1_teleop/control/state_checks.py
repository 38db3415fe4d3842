"""Plausibility of the robot state a controller takes (joint_states, imu), ROS-free.

A sample is taken only when it could be the robot's: every value finite; joint positions within the joint
limits ± ``position_margin_rad``; joint velocities within ``velocity_factor`` × the velocity limits; the IMU
orientation a unit quaternion and the gyro within ``max_gyro_rad_s``; and no jump from the last taken sample
that the joints (at ``jump_factor`` × their velocity limits) or the pelvis (at ``max_gyro_rad_s``) could not have
made since, nor a gyro change beyond ``max_angular_accel_rad_s2``, over at least ``min_interval_s`` (a physics
step in real time; in lockstep, where the simulation may run faster than the wall clock, a control period).
With a clock to compare (``now_stamp_ns``), a stamp more than
``stamp_tolerance_s`` away from now is refused too. A refused sample raises :class:`ImplausibleState` (its
``kind`` groups the reasons for once-only warnings); the caller keeps the last taken one, and the usual
staleness rules apply when no sample is taken for a while. Times: monotonic wall seconds; stamps: ns.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


class ImplausibleState(ValueError):
    """A state sample that cannot be the robot's; ``kind`` names the check it failed."""

    def __init__(self, kind: str, reason: str) -> None:
        super().__init__(reason)
        self.kind = kind


@dataclass(frozen=True)
class PlausibilityLimits:
    """How far a state sample may go before it is refused (see the module doc)."""

    position_margin_rad: float = 0.2
    velocity_factor: float = 3.0
    quaternion_tolerance: float = 1e-3
    max_gyro_rad_s: float = 35.0  # the G1 IMU's range, ±2000 °/s
    jump_factor: float = 1.5
    jump_slack_rad: float = 0.05
    max_angular_accel_rad_s2: float = 500.0
    gyro_slack_rad_s: float = 0.5
    min_interval_s: float = 0.005  # a jump is allowed at least this much time
    stamp_tolerance_s: float = 1.0

    def __post_init__(self) -> None:
        for name, value in vars(self).items():
            if not (np.isfinite(value) and value > 0):
                raise ValueError(f"plausibility limits: {name} must be a finite value > 0, got {value}")


class StateChecks:
    """Checks joint and IMU samples against the robot's limits and against the last taken sample."""

    def __init__(self, q_lower: np.ndarray, q_upper: np.ndarray, velocity_limit: np.ndarray,
                 limits: PlausibilityLimits | None = None) -> None:
        self.limits = limits or PlausibilityLimits()
        lim = self.limits
        self._q_low, self._q_high = q_lower - lim.position_margin_rad, q_upper + lim.position_margin_rad
        self._max_dq = lim.velocity_factor * np.asarray(velocity_limit, dtype=float)
        self._max_step = lim.jump_factor * np.asarray(velocity_limit, dtype=float)
        self._last_q: tuple[np.ndarray, float] | None = None
        self._last_imu: tuple[np.ndarray, np.ndarray, float] | None = None

    def _check_stamp(self, what: str, stamp_ns: int, now_stamp_ns: int | None) -> None:
        if now_stamp_ns is None:
            return
        off_s = (stamp_ns - now_stamp_ns) * 1e-9
        if abs(off_s) > self.limits.stamp_tolerance_s:
            raise ImplausibleState("stamp", f"{what} stamped {stamp_ns * 1e-9:.3f} s, {off_s:+.3f} s from the clock "
                                            f"(more than ±{self.limits.stamp_tolerance_s} s)")

    def _interval(self, last_s: float, now_s: float) -> float:
        return max(now_s - last_s, self.limits.min_interval_s)

    def take_joints(self, q: np.ndarray, dq: np.ndarray, received_s: float, stamp_ns: int = 0,
                    now_stamp_ns: int | None = None) -> None:
        """Accept q, dq (rad, rad/s; DDS order) as the last taken joint sample, or raise ImplausibleState."""
        if not (np.all(np.isfinite(q)) and np.all(np.isfinite(dq))):
            raise ImplausibleState("nan", "non-finite joint positions or velocities")
        outside = np.flatnonzero((q < self._q_low) | (q > self._q_high))
        if outside.size:
            raise ImplausibleState("joint_range", f"{outside.size} joint positions beyond the joint limits ± "
                                                  f"{self.limits.position_margin_rad} rad (joint {outside[0]}: "
                                                  f"{q[outside[0]]:.3g} rad)")
        fast = np.flatnonzero(np.abs(dq) > self._max_dq)
        if fast.size:
            raise ImplausibleState("joint_velocity", f"{fast.size} joint velocities beyond "
                                                     f"{self.limits.velocity_factor} × the velocity limits (joint "
                                                     f"{fast[0]}: {dq[fast[0]]:.3g} rad/s)")
        self._check_stamp("joint_states", stamp_ns, now_stamp_ns)
        if self._last_q is not None:
            last, last_s = self._last_q
            allowed = self._max_step * self._interval(last_s, received_s) + self.limits.jump_slack_rad
            jumped = np.flatnonzero(np.abs(q - last) > allowed)
            if jumped.size:
                raise ImplausibleState("joint_jump", f"{jumped.size} joints moved faster than "
                                                     f"{self.limits.jump_factor} × their velocity limits since "
                                                     f"the last sample (joint {jumped[0]}: "
                                                     f"{q[jumped[0]] - last[jumped[0]]:+.3g} rad)")
        self._last_q = (np.array(q, dtype=float), received_s)

    def take_imu(self, quat_wxyz: np.ndarray, gyro: np.ndarray, received_s: float, stamp_ns: int = 0,
                 now_stamp_ns: int | None = None) -> None:
        """Accept an orientation (w, x, y, z) and a gyro (rad/s) as the last taken IMU sample, or raise."""
        if not (np.all(np.isfinite(quat_wxyz)) and np.all(np.isfinite(gyro))):
            raise ImplausibleState("nan", "non-finite IMU orientation or angular velocity")
        norm = float(np.linalg.norm(quat_wxyz)) if np.max(np.abs(quat_wxyz)) < 2.0 else np.inf
        if abs(norm - 1.0) > self.limits.quaternion_tolerance:
            raise ImplausibleState("imu_quaternion", f"IMU orientation is not a unit quaternion (norm {norm:.4g})")
        speed = float(np.max(np.abs(gyro)))
        speed = speed if speed > self.limits.max_gyro_rad_s else float(np.linalg.norm(gyro))  # no overflow
        if speed > self.limits.max_gyro_rad_s:
            raise ImplausibleState("imu_gyro", f"IMU angular velocity {speed:.3g} rad/s beyond "
                                               f"{self.limits.max_gyro_rad_s} rad/s")
        self._check_stamp("imu", stamp_ns, now_stamp_ns)
        quat = np.asarray(quat_wxyz, dtype=float) / norm
        if self._last_imu is not None:
            lim = self.limits
            last, last_gyro, last_s = self._last_imu
            interval = self._interval(last_s, received_s)
            w = abs(float(np.dot(last, quat)))  # cos(angle / 2)
            angle = 2.0 * float(np.arccos(min(w, 1.0)))
            if angle > lim.max_gyro_rad_s * interval + lim.jump_slack_rad:
                raise ImplausibleState("imu_jump", f"the pelvis turned {angle:.3g} rad since the last IMU sample, "
                                                   f"more than {lim.max_gyro_rad_s} rad/s allows")
            change = float(np.linalg.norm(np.asarray(gyro, dtype=float) - last_gyro))
            if change > lim.max_angular_accel_rad_s2 * interval + lim.gyro_slack_rad_s:
                raise ImplausibleState("imu_gyro_jump", f"the angular velocity changed by {change:.3g} rad/s since the "
                                                        f"last IMU sample, more than {lim.max_angular_accel_rad_s2} "
                                                        "rad/s² allows")
        self._last_imu = (quat, np.array(gyro, dtype=float), received_s)
