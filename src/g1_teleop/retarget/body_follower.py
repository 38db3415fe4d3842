"""The operator's body → the upper-body targets the lower-body controller leaves to the operator (the 3 waist
and 14 arm joints), ROS-free.

The first ``calibration_s`` of body frames calibrate the operator's scales (``whole_body.calibrate``: they stand
still; while they move the window starts again). Then every frame is retargeted by GMR's method
(``whole_body.WholeBodyRetargeter``) and the waist and arm joints of the answer are the targets; the legs and the
floating base of the answer are left out of them, so the robot's legs stay with its own controller (the whole
answer comes along, for tools). Until calibrated the targets hold the arms where they were measured first and give
no waist target (the controller holds it).
Vectors in DDS order within each group (``waist``, ``arms`` of the robot description); angles in rad.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from g1_teleop.core.robot_description import Robot
from g1_teleop.core.rotations import yaw_from_wxyz
from g1_teleop.retarget.whole_body import WholeBodyFrame, WholeBodyRetargeter, calibrate


@dataclass(frozen=True)
class UpperBodyTarget:
    """Targets of one body frame: ``arm_q`` (14,) rad and ``arm_tau_ff`` (14,) N·m (gravity, at the targets),
    ``waist_q`` (3,) rad or None (calibrating: the controller holds the waist); ``calibrated``; ``converged``:
    both IK phases converged (always True while calibrating); ``pelvis_height_m``: the retargeted robot's pelvis
    above the floor (m: the operator's, scaled by the calibration; None while calibrating), a squat height;
    ``pelvis_yaw_rad``: the retargeted pelvis's heading in the operator's world (rad; None while calibrating);
    ``frame``: the whole retargeted robot (floating base, 29 joints, tracked links' poses; None while calibrating)."""

    arm_q: np.ndarray
    arm_tau_ff: np.ndarray
    waist_q: np.ndarray | None
    calibrated: bool
    converged: bool
    pelvis_height_m: float | None = None
    pelvis_yaw_rad: float | None = None
    frame: WholeBodyFrame | None = None


class BodyFollower:
    """Body frames in, upper-body targets out (module docstring). ``arm_gravity(q_body)``: the arms' gravity
    torques (14,) at a 29-joint configuration (``DualArmIK.gravity_torques``-like)."""

    def __init__(self, robot: Robot, retargeter: WholeBodyRetargeter,
                 arm_gravity: Callable[[np.ndarray], np.ndarray]) -> None:
        self.retargeter = retargeter
        self._arms, self._waist = robot.group("arms"), robot.group("waist")
        self._gravity = arm_gravity
        self._window: list[tuple[float, np.ndarray]] = []
        self._hold: np.ndarray | None = None
        self.calibrated = False
        self.problem: str | None = None
        """Why the last calibration window was refused (None: none refused yet)."""

    def put(self, stamp_s: float, positions: np.ndarray, quat_wxyz: np.ndarray,
            q_measured: np.ndarray) -> UpperBodyTarget:
        """The targets for one body frame at ``stamp_s`` (s): (24, 3) positions (m), (24, 4) orientations, XRobot's
        order, z-up operator world; ``q_measured`` (29,) the robot's joints now."""
        if self._hold is None:
            self._hold = np.asarray(q_measured, float).copy()
        if not self.calibrated:
            self._calibrate(stamp_s, positions)
        if not self.calibrated:
            return UpperBodyTarget(self._hold[self._arms], self._gravity(self._hold), None, False, True)
        frame = self.retargeter.solve(stamp_s, positions, quat_wxyz)
        q_body = np.asarray(q_measured, float).copy()
        q_body[self._arms], q_body[self._waist] = frame.joints[self._arms], frame.joints[self._waist]
        return UpperBodyTarget(frame.joints[self._arms], self._gravity(q_body), frame.joints[self._waist], True,
                               frame.converged, float(frame.base_position[2]), yaw_from_wxyz(frame.base_wxyz), frame)

    def _calibrate(self, stamp_s: float, positions: np.ndarray) -> None:
        config = self.retargeter.config
        if self._window and stamp_s <= self._window[-1][0]:
            self._window.clear()  # time went back: a new stream
        self._window.append((stamp_s, np.asarray(positions, float)))
        if stamp_s - self._window[0][0] < config.calibration_s:
            return
        try:
            calibration = calibrate(self.retargeter, np.stack([p for _, p in self._window]))
        except ValueError as exc:
            self.problem = str(exc)
            self._window.clear()
            return
        self.retargeter.calibrate_with(calibration)
        self.retargeter.reset()
        self.calibrated, self.problem = True, None
        self._window.clear()
