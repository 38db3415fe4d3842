"""Dual-arm inverse kinematics in the pelvis frame, with gravity feed-forward: the façade the retarget node uses.
ROS-free.

It composes the arm chains of the model (``arm_chains``), the objective of OpenWBT's arm IK (``ik_objective``)
under the joint bounds and, with a collision model, the clearance constraints (``clearance_constraints``),
evaluated by one compiled function (``arm_ik_problem``) and minimised by Levenberg-Marquardt with QP steps
(``levenberg_marquardt``), the gravity torques (``gravity_feedforward``) and the differential IK of the
gamepad mode (``differential_ik``). Answers pass through OpenWBT's output filter (``WeightedMovingFilter``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from g1_teleop.core.filters import WeightedMovingFilter
from g1_teleop.retarget.arm_chains import ArmChains
from g1_teleop.retarget.arm_ik_config import ArmIKConfig
from g1_teleop.retarget.arm_ik_problem import ArmIKProblem
from g1_teleop.retarget.differential_ik import DifferentialArmIK
from g1_teleop.retarget.gravity_feedforward import ArmGravity
from g1_teleop.retarget.levenberg_marquardt import LevenbergMarquardt
from g1_teleop.retarget.self_collision import ArmCollisionModel

_ROTATION_TOLERANCE = 1e-3  # max |RᵀR − I| entry for a target rotation to be usable


@dataclass(frozen=True)
class ArmIKResult:
    """One IK answer.

    q_arm (14,) rad and tau_ff (14,) N·m follow ``DualArmIK.arm_joint_names`` (DDS order: left
    shoulder_pitch … wrist_yaw, then right). tau_ff is the gravity torque at q_arm (fixed base, rest of
    the body at the measured pose). pos_err_m and rot_err_rad (2,) are the (left, right) errors of the
    optimizer's solution before the output filter, NaN when the targets were unusable. ``ok`` is False
    when the targets were unusable or no collision-free configuration was found from the measured one;
    q_arm is then the measured arm joints. ``converged`` is False also when the iteration cap stopped an
    ok solve (typically an unreachable target): q_arm is then the best point found so far, and the next
    solve, warm-started there, continues towards the optimum. clearance_m: the smallest clearance of the
    solution's arm proxies (capped at the collision model's search range; inf without a collision model).
    """

    q_arm: np.ndarray
    tau_ff: np.ndarray
    ok: bool
    converged: bool
    pos_err_m: np.ndarray
    rot_err_rad: np.ndarray
    iterations: int
    clearance_m: float


class DualArmIK:
    """Pelvis-frame dual-arm IK on a fixed-base Pinocchio model of the G1.

    model: fixed-base model whose world frame is the pelvis and which has the end-effector frames named
    in the config. joint_names: the body joints in DDS order (the order of ``q_measured``); see ``ArmChains``
    for how the arm joints are found. collision: proxies of the arms and of what they may touch, built on
    the same model; with it, every answer keeps ``config.min_clearance_m`` between them. Raises KeyError for
    body joints the model lacks and ValueError for an unsuitable model.
    """

    def __init__(
        self,
        model: pin.Model,
        joint_names: Sequence[str],
        config: ArmIKConfig | None = None,
        collision: ArmCollisionModel | None = None,
    ) -> None:
        self.config = config or ArmIKConfig()
        cfg = self.config
        self._chains = ArmChains(model, joint_names, (cfg.left_frame, cfg.right_frame))
        self.arm_indices = self._chains.arm_indices
        """Positions of the arm joints in the DDS-ordered body vector, shape (14,)."""
        self.arm_joint_names = self._chains.arm_joint_names
        self.q_lower = self._chains.q_lower
        """Lower joint bounds (14,) rad, from the model."""
        self.q_upper = self._chains.q_upper
        """Upper joint bounds (14,) rad, from the model."""
        weights = (cfg.position_weight, cfg.rotation_weight, cfg.posture_weight, cfg.measured_weight)
        self._problem = ArmIKProblem(self._chains, weights, cfg.min_clearance_m, collision)
        self._solver = LevenbergMarquardt(self._problem, cfg)
        self._gravity = ArmGravity(self._chains)
        self._differential = DifferentialArmIK(self._chains)
        self._filter = WeightedMovingFilter(cfg.filter_weights)

    def reset(self) -> None:
        """Forget the output filter's history (call when teleoperation (re)starts)."""
        self._filter.reset()

    def end_effector_poses(self, q_body: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """pelvis_T_left_ee, pelvis_T_right_ee (4x4, m) for body joints ``q_body`` (DDS order, rad)."""
        return self._chains.end_effector_poses(q_body)

    def solve(
        self, pelvis_T_left_target: np.ndarray, pelvis_T_right_target: np.ndarray, q_measured: np.ndarray
    ) -> ArmIKResult:
        """Arm joints that bring left_ee/right_ee to the targets (4x4, pelvis frame, m).

        q_measured: measured body joints (DDS order, rad, finite): the warm start, the reference of the
        ‖q − q_measured‖ term, and the locked pose of every non-arm joint. Targets that are not finite
        rigid transforms, or no collision-free configuration found from the measured one, give ok=False and
        the measured arm joints.
        """
        q_measured = np.asarray(q_measured, dtype=float)
        q = self._chains.full_q(q_measured)
        if not np.all(np.isfinite(q_measured)):
            raise ValueError("DualArmIK.solve: q_measured has non-finite entries")
        measured_arm = q_measured[self.arm_indices]
        targets = []
        for name, target in (("left", pelvis_T_left_target), ("right", pelvis_T_right_target)):
            target = np.asarray(target, dtype=float)
            if target.shape != (4, 4):
                raise ValueError(f"DualArmIK.solve: the {name} target must be 4x4, got shape {target.shape}")
            targets.append(target)
        if not all(_is_rigid_transform(t) for t in targets):
            nan2 = np.full(2, np.nan)
            return ArmIKResult(measured_arm, self._gravity.torques(q), False, False, nan2, nan2, 0, math.nan)

        measured_x = measured_arm[self._chains.x_order]
        solution, converged, iterations = self._solver.minimize(
            measured_x, self._problem.parameters(q, measured_x, targets))
        q_arm = self._chains.arm_from_x(solution.x)
        ok = solution.violation <= 0.0 and bool(np.all(np.isfinite(q_arm)))
        # (the filter's weighted mean of in-bound values can round past a bound)
        q_arm = np.clip(self._filter.update(q_arm), self.q_lower, self.q_upper) if ok else measured_arm
        return ArmIKResult(q_arm, self._gravity.torques(self._chains.with_arms(q, q_arm)), ok, converged,
                           solution.errors[:2], solution.errors[2:], iterations, solution.smallest_clearance)

    def differential_step(
        self,
        q_body: np.ndarray,
        left_twist: np.ndarray,
        right_twist: np.ndarray,
        dt: float,
        damping: float = 0.05,
        rotation_weight: float = 1.0,
        max_joint_speed: float = np.inf,
    ) -> np.ndarray:
        """Arm joints (14,) after moving each end effector with a twist (v [m/s], ω [rad/s], pelvis axes) for
        ``dt`` seconds, from body joints ``q_body`` (DDS order, rad): ``DifferentialArmIK.step``."""
        return self._differential.step(q_body, left_twist, right_twist, dt, damping, rotation_weight,
                                       max_joint_speed)

    def gravity_torques(self, q_body: np.ndarray) -> np.ndarray:
        """Gravity feed-forward (14,) N·m of the arm joints at body joints ``q_body`` (DDS order)."""
        return self._gravity.torques(self._chains.full_q(np.asarray(q_body, dtype=float)))


def _is_rigid_transform(T: np.ndarray) -> bool:
    """Finite homogeneous transform with a proper rotation block (in plain floats: a 4x4 is too small for
    numpy to pay off; a NaN or inf anywhere makes the sum non-finite)."""
    (a, b, c, x), (d, e, f, y), (g, h, i, z), last = T.tolist()
    if last != [0.0, 0.0, 0.0, 1.0] or not math.isfinite(a + b + c + d + e + f + g + h + i + x + y + z):
        return False
    gram_error = (a * a + d * d + g * g - 1.0, b * b + e * e + h * h - 1.0, c * c + f * f + i * i - 1.0,
                  a * b + d * e + g * h, a * c + d * f + g * i, b * c + e * f + h * i)  # RᵀR − I
    determinant = a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g)
    return max(map(abs, gram_error)) <= _ROTATION_TOLERANCE and determinant > 0.0
