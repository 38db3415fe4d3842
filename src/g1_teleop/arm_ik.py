"""Dual-arm inverse kinematics in the pelvis frame, with gravity feed-forward (g1_conventions §8).

The objective (the form of OpenWBT's G1_29_ArmIK), over the 14 arm joints q with the rest of the body
locked at the measured pose:

    w_p·Σ‖p_ee − p*‖² + w_R·Σ‖log3(R_ee·R*ᵀ)‖² + w_0·‖q‖² + w_m·‖q − q_measured‖²

subject to the joint bounds. End-effector poses are taken in the model's world frame, which for the
fixed-base model is the pelvis. The arms share no joint, so the problem is two independent 7-joint
problems; both are solved together (one kinematics pass per iteration) by Levenberg-Marquardt with a
box-constrained step, warm-started from the measured arm joints.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields

import numpy as np
import pinocchio as pin

from g1_teleop.filters import WeightedMovingFilter
from g1_teleop.robot import PinJointMap

_ROTATION_TOLERANCE = 1e-3  # max |RᵀR − I| entry for a target rotation to be usable
_INITIAL_DAMPING = 1e-3  # initial Levenberg-Marquardt damping, relative to the largest Hessian diagonal entry


@dataclass(frozen=True)
class ArmIKConfig:
    """Weights of the IK objective and solver settings.

    position_weight: per m² of end-effector position error; rotation_weight: per rad² of orientation
    error; posture_weight: on ‖q‖² (rad²); measured_weight: on ‖q − q_measured‖² (rad²).
    OpenWBT uses 50, 1, 0.02, 0.1. With 0.02 the posture term pulls the answer 4-9 mm and 30-65 mrad away
    from reachable targets on the G1; 0.0002 keeps that pull around 1 mm at worst under steady tracking
    while still drawing the redundant elbow swivel slowly towards q = 0.
    max_iterations: kinematics evaluations per solve; a solve that has not converged by then fails.
    step_tolerance_rad, cost_tolerance: an arm has converged when its undamped Gauss-Newton step (within
    the bounds) moves no joint more than step_tolerance_rad, or is predicted to lower its objective by less
    than cost_tolerance times the objective.
    filter_weights: output filter (``WeightedMovingFilter``), newest first; (1.0,) disables it.
    """

    position_weight: float = 50.0
    rotation_weight: float = 1.0
    posture_weight: float = 0.0002
    measured_weight: float = 0.1
    max_iterations: int = 50
    step_tolerance_rad: float = 1e-5
    cost_tolerance: float = 1e-4
    filter_weights: tuple[float, ...] = (0.4, 0.3, 0.2, 0.1)
    left_frame: str = "left_ee"
    right_frame: str = "right_ee"

    def __post_init__(self) -> None:
        for name in ("rotation_weight", "posture_weight", "measured_weight"):
            _check_number(name, getattr(self, name), positive=False)
        for name in ("position_weight", "step_tolerance_rad", "cost_tolerance"):
            _check_number(name, getattr(self, name), positive=True)
        if self.posture_weight + self.measured_weight <= 0.0:
            raise ValueError(
                "ArmIKConfig: posture_weight + measured_weight must be > 0 (they keep the problem well posed "
                "at singular arm configurations)"
            )
        iterations = self.max_iterations
        if isinstance(iterations, bool) or not isinstance(iterations, int) or iterations < 1:
            raise ValueError(f"ArmIKConfig.max_iterations: expected an integer >= 1, got {iterations!r}")
        try:
            WeightedMovingFilter(self.filter_weights)
        except ValueError as exc:
            raise ValueError(f"ArmIKConfig.filter_weights: {exc}") from None
        if self.left_frame == self.right_frame:
            raise ValueError(f"ArmIKConfig: left_frame and right_frame are both {self.left_frame!r}")


@dataclass(frozen=True)
class ArmIKResult:
    """One IK answer.

    q_arm (14,) rad and tau_ff (14,) N·m follow ``DualArmIK.arm_joint_names`` (DDS order: left
    shoulder_pitch … wrist_yaw, then right). tau_ff is the gravity torque at q_arm (fixed base, rest of
    the body at the measured pose). pos_err_m and rot_err_rad (2,) are the (left, right) errors of the
    optimizer's solution before the output filter, NaN when the targets were unusable. On failure ``ok``
    is False and q_arm is the measured arm joints.
    """

    q_arm: np.ndarray
    tau_ff: np.ndarray
    ok: bool
    pos_err_m: np.ndarray
    rot_err_rad: np.ndarray
    iterations: int


@dataclass(frozen=True)
class _Linearization:
    """Per-arm (leading axis: left, right) objective, gradient and Gauss-Newton Hessian at x."""

    x: np.ndarray  # (2, n) arm joints
    cost: np.ndarray  # (2,)
    gradient: np.ndarray  # (2, n), half the true gradient
    hessian: np.ndarray  # (2, n, n), half the Gauss-Newton Hessian
    pos_err: np.ndarray  # (2,) m
    rot_err: np.ndarray  # (2,) rad

    def where(self, take_other: np.ndarray, other: _Linearization) -> _Linearization:
        """Per arm, ``other`` where take_other is True, else self."""
        values = []
        for field in fields(self):
            mine, theirs = getattr(self, field.name), getattr(other, field.name)
            values.append(np.where(take_other.reshape((2,) + (1,) * (mine.ndim - 1)), theirs, mine))
        return _Linearization(*values)


class DualArmIK:
    """Pelvis-frame dual-arm IK on a fixed-base Pinocchio model of the G1.

    model: fixed-base model whose world frame is the pelvis and which has the end-effector frames named
    in the config. joint_names: the body joints in DDS order (the order of ``q_measured``). The arm joints
    are found from the model: those that move one end-effector frame and not the other. Model joints that
    are not in ``joint_names`` (for example hand joints) stay at their neutral value. Raises KeyError for
    body joints the model lacks and ValueError for an unsuitable model.
    """

    def __init__(
        self, model: pin.Model, joint_names: Sequence[str], config: ArmIKConfig | None = None
    ) -> None:
        self.config = config or ArmIKConfig()
        self._model = model
        self._data = model.createData()
        self._n_body = len(joint_names)
        multi = [model.names[j] for j in range(1, model.njoints) if model.nqs[j] != 1 or model.nvs[j] != 1]
        if multi:
            raise ValueError(f"DualArmIK: the model must be fixed-base, with 1-DoF joints only: {multi}")
        self._dds_idx_q = PinJointMap.from_model(model, joint_names).idx_q
        dds_position = {model.getJointId(n): i for i, n in enumerate(joint_names)}
        self._q_template = pin.neutral(model)

        frames = (self.config.left_frame, self.config.right_frame)
        absent = [f for f in frames if not model.existFrame(f)]
        if absent:
            raise ValueError(f"DualArmIK: frames missing from the Pinocchio model: {absent}")
        self._frame_ids = tuple(model.getFrameId(f) for f in frames)
        supports = [set(model.supports[model.frames[f].parentJoint]) - {0} for f in self._frame_ids]
        chains = []
        for frame, own, other in zip(frames, supports, supports[::-1], strict=True):
            chain = own - other
            outside = sorted(model.names[j] for j in chain if j not in dds_position)
            if not chain or outside:
                raise ValueError(
                    f"DualArmIK: the chain of {frame!r} is empty or has joints not in joint_names: {outside}"
                )
            chains.append(sorted(chain, key=dds_position.__getitem__))
        if len(chains[0]) != len(chains[1]):
            raise ValueError(f"DualArmIK: arm chains differ in length: {len(chains[0])} vs {len(chains[1])}")
        arm_ids = sorted(chains[0] + chains[1], key=dds_position.__getitem__)
        self.arm_indices = np.array([dds_position[j] for j in arm_ids])
        """Positions of the arm joints in the DDS-ordered body vector, shape (14,)."""
        self.arm_joint_names: tuple[str, ...] = tuple(model.names[j] for j in arm_ids)
        self._arm_idx_q = np.array([model.idx_qs[j] for j in arm_ids])
        self._arm_idx_v = np.array([model.idx_vs[j] for j in arm_ids])
        self.q_lower = model.lowerPositionLimit[self._arm_idx_q].copy()
        """Lower joint bounds (14,) rad, from the model."""
        self.q_upper = model.upperPositionLimit[self._arm_idx_q].copy()
        """Upper joint bounds (14,) rad, from the model."""
        if not (np.all(np.isfinite(self.q_lower)) and np.all(np.isfinite(self.q_upper))):
            raise ValueError("DualArmIK: every arm joint needs finite position limits in the model")
        # Per arm (left, right): positions in q_arm, and columns of the model's q / v.
        self._columns = np.array([[arm_ids.index(j) for j in chain] for chain in chains])
        self._chain_v = [_index(model.idx_vs[j] for j in chain) for chain in chains]
        self._lower = self.q_lower[self._columns]
        self._upper = self.q_upper[self._columns]
        self._eye = np.eye(len(chains[0]))
        self._regularization = (self.config.posture_weight + self.config.measured_weight) * self._eye
        self._root_weights = np.sqrt([self.config.position_weight] * 3 + [self.config.rotation_weight] * 3)
        self._filter = WeightedMovingFilter(self.config.filter_weights)

    def reset(self) -> None:
        """Forget the output filter's history (call when teleoperation (re)starts)."""
        self._filter.reset()

    def end_effector_poses(self, q_body: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """pelvis_T_left_ee, pelvis_T_right_ee (4x4, m) for body joints ``q_body`` (DDS order, rad)."""
        q = self._full_q(np.asarray(q_body, dtype=float))
        pin.framesForwardKinematics(self._model, self._data, q)
        left, right = (self._data.oMf[f].homogeneous.copy() for f in self._frame_ids)
        return left, right

    def solve(
        self, pelvis_T_left_target: np.ndarray, pelvis_T_right_target: np.ndarray, q_measured: np.ndarray
    ) -> ArmIKResult:
        """Arm joints that bring left_ee/right_ee to the targets (4x4, pelvis frame, m).

        q_measured: measured body joints (DDS order, rad, finite): the warm start, the reference of the
        ‖q − q_measured‖ term, and the locked pose of every non-arm joint. Targets that are not finite
        rigid transforms, or a solve that does not converge, give ok=False and the measured arm joints.
        """
        q_measured = np.asarray(q_measured, dtype=float)
        q = self._full_q(q_measured)
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
            return ArmIKResult(measured_arm, self._gravity(q, measured_arm), False, nan2, nan2, 0)

        solution, converged, iterations = self._minimize(q, measured_arm[self._columns], targets)
        q_arm = np.empty(self.arm_indices.size)
        q_arm[self._columns] = solution.x
        ok = converged and bool(np.all(np.isfinite(q_arm)))
        # (the filter's weighted mean of in-bound values can round past a bound)
        q_arm = np.clip(self._filter.update(q_arm), self.q_lower, self.q_upper) if ok else measured_arm
        return ArmIKResult(q_arm, self._gravity(q, q_arm), ok, solution.pos_err, solution.rot_err, iterations)

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
        """Arm joints (14,) after moving each end effector with a twist for ``dt`` seconds.

        Damped least squares per arm: q̇ = J̃ᵀ(J̃J̃ᵀ + λ²I)⁻¹W ẋ with ẋ = (v [m/s], ω [rad/s]) of left_ee /
        right_ee in pelvis axes, J̃ = W J, W = diag(1, 1, 1, w, w, w) (w = ``rotation_weight``: below 1 the
        orientation yields first where the arm cannot do both) and λ = ``damping``: near singularities and
        at the edge of the workspace the hand lags instead of the joints whipping. q̇ is scaled down as a
        whole to at most ``max_joint_speed`` rad/s. q_body: body joints (DDS order, rad) the step starts
        from. The result stays inside the joint bounds.
        """
        q = self._full_q(np.asarray(q_body, dtype=float))
        pin.computeJointJacobians(self._model, self._data, q)
        weights = np.array([1.0, 1.0, 1.0] + [rotation_weight] * 3)
        q_arm = np.asarray(q_body, dtype=float)[self.arm_indices].copy()
        for arm, (frame_id, twist) in enumerate(zip(self._frame_ids, (left_twist, right_twist), strict=True)):
            twist = np.asarray(twist, dtype=float)
            if twist.shape != (6,) or not np.all(np.isfinite(twist)):
                raise ValueError(f"DualArmIK.differential_step: twists must be 6 finite values, got {twist}")
            pin.updateFramePlacement(self._model, self._data, frame_id)
            J = pin.getFrameJacobian(self._model, self._data, frame_id, pin.LOCAL_WORLD_ALIGNED)
            J = weights[:, None] * J[:, self._chain_v[arm]]
            q_dot = J.T @ np.linalg.solve(J @ J.T + damping**2 * np.eye(6), weights * twist)
            q_dot *= min(1.0, max_joint_speed / max(float(np.abs(q_dot).max()), 1e-12))
            q_arm[self._columns[arm]] += q_dot * dt
        return np.clip(q_arm, self.q_lower, self.q_upper)

    def gravity_torques(self, q_body: np.ndarray) -> np.ndarray:
        """Gravity feed-forward (14,) N·m of the arm joints at body joints ``q_body`` (DDS order)."""
        q_body = np.asarray(q_body, dtype=float)
        return self._gravity(self._full_q(q_body), q_body[self.arm_indices])

    def _full_q(self, q_body: np.ndarray) -> np.ndarray:
        if q_body.shape != (self._n_body,):
            raise ValueError(f"DualArmIK: expected {self._n_body} body joint positions, got {q_body.shape}")
        q = self._q_template.copy()
        q[self._dds_idx_q] = q_body
        return q

    def _gravity(self, q: np.ndarray, q_arm: np.ndarray) -> np.ndarray:
        q = q.copy()
        q[self._arm_idx_q] = q_arm
        return pin.computeGeneralizedGravity(self._model, self._data, q)[self._arm_idx_v].copy()

    def _minimize(
        self, q: np.ndarray, measured: np.ndarray, targets: list[np.ndarray]
    ) -> tuple[_Linearization, bool, int]:
        """Levenberg-Marquardt from the measured joints; per-arm step acceptance and damping.

        measured: (2, n) measured joints per arm. Returns the final linearization, whether both arms
        converged, and the number of kinematics evaluations.
        """
        cfg = self.config
        target_p = np.stack([t[:3, 3] for t in targets])
        target_R = np.stack([t[:3, :3] for t in targets])
        x = np.clip(measured, self._lower, self._upper)
        current = self._linearize(q, x, measured, target_p, target_R)
        # Damping update of Nielsen (1999): from the ratio of actual to predicted cost reduction.
        damping = _INITIAL_DAMPING * np.max(np.diagonal(current.hessian, axis1=1, axis2=2), axis=1)
        growth = np.full(2, 2.0)
        converged = np.zeros(2, dtype=bool)
        evaluations = 1
        while True:
            # Converged when the undamped Gauss-Newton model f + 2gᵀΔ + ΔᵀHΔ (gradient and Hessian are
            # stored halved) promises a negligible step or reduction.
            full = self._bounded_step(current.hessian, current)
            converged |= (np.max(np.abs(full), axis=1) < cfg.step_tolerance_rad) | (
                _reduction(current, full) <= cfg.cost_tolerance * current.cost
            )
            if converged.all() or evaluations >= cfg.max_iterations:
                return current, bool(converged.all()), evaluations
            step = self._bounded_step(current.hessian + damping[:, None, None] * self._eye, current)
            step[converged] = 0.0
            predicted = _reduction(current, step)
            # (x + (bound − x) can round past the bound)
            trial_x = np.clip(current.x + step, self._lower, self._upper)
            trial = self._linearize(q, trial_x, measured, target_p, target_R)
            evaluations += 1
            gain = (current.cost - trial.cost) / np.where(predicted > 0.0, predicted, np.inf)
            better = (gain > 0.0) & ~converged
            worse = ~better & ~converged
            current = current.where(better, trial)
            shrink = np.maximum(1.0 / 3.0, 1.0 - (2.0 * np.minimum(gain, 1.0) - 1.0) ** 3)
            damping = np.where(better, damping * shrink, np.where(worse, damping * growth, damping))
            growth = np.where(better, 2.0, np.where(worse, growth * 2.0, growth))

    def _bounded_step(self, system: np.ndarray, at: _Linearization) -> np.ndarray:
        """Per arm, argmin gᵀΔ + ½ΔᵀAΔ within the joint bounds, for the (2, n, n) matrices A = ``system``."""
        step = np.linalg.solve(system, -at.gradient[..., None])[..., 0]
        lower = self._lower - at.x
        upper = self._upper - at.x
        for arm in np.flatnonzero(((step < lower) | (step > upper)).any(axis=1)):
            step[arm] = _box_qp(system[arm], at.gradient[arm], lower[arm], upper[arm], step[arm])
        return step

    def _linearize(
        self, q: np.ndarray, x: np.ndarray, measured: np.ndarray, target_p: np.ndarray, target_R: np.ndarray
    ) -> _Linearization:
        """Objective terms at arm joints x (2, n); q (full model configuration) gets x written in."""
        cfg = self.config
        q[self._arm_idx_q[self._columns]] = x
        pin.computeJointJacobians(self._model, self._data, q)
        # Both errors are taken in end-effector axes, where the frame Jacobian needs no rotation; their norms
        # are the ones of the objective: ‖R*ᵀ…‖ keeps lengths, ‖log3(R*ᵀR)‖ = ‖log3(R R*ᵀ)‖ (conjugates).
        residual = np.empty((2, 6))  # [Rᵀ(p − p*), log3(R*ᵀR)]
        jacobian = np.empty((2, 6, x.shape[1]))
        for arm, frame_id in enumerate(self._frame_ids):
            pelvis_T_ee = pin.updateFramePlacement(self._model, self._data, frame_id)
            pelvis_R_ee = pelvis_T_ee.rotation
            target_R_ee = target_R[arm].T @ pelvis_R_ee
            residual[arm, :3] = (pelvis_T_ee.translation - target_p[arm]) @ pelvis_R_ee
            residual[arm, 3:] = pin.log3(target_R_ee)
            ee_J = pin.getFrameJacobian(self._model, self._data, frame_id, pin.LOCAL)
            jacobian[arm] = ee_J[:, self._chain_v[arm]]
            jacobian[arm, 3:] = pin.Jlog3(target_R_ee) @ jacobian[arm, 3:]
        pos_err = np.sqrt((residual[:, :3] ** 2).sum(axis=1))
        rot_err = np.sqrt((residual[:, 3:] ** 2).sum(axis=1))
        residual *= self._root_weights
        jacobian *= self._root_weights[:, None]
        jacobian_T = jacobian.transpose(0, 2, 1)
        d = x - measured
        w_0, w_m = cfg.posture_weight, cfg.measured_weight
        return _Linearization(
            x=x,
            cost=_dot(residual, residual) + w_0 * _dot(x, x) + w_m * _dot(d, d),
            gradient=(jacobian_T @ residual[..., None])[..., 0] + w_0 * x + w_m * d,
            hessian=jacobian_T @ jacobian + self._regularization,
            pos_err=pos_err,
            rot_err=rot_err,
        )


def _check_number(name: str, value: object, positive: bool) -> None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if not ok or value < 0.0 or (positive and value == 0.0):  # type: ignore[operator]
        bound = "> 0" if positive else ">= 0"
        raise ValueError(f"ArmIKConfig.{name}: expected a finite number {bound}, got {value!r}")


def _reduction(at: _Linearization, step: np.ndarray) -> np.ndarray:
    """Cost reduction the Gauss-Newton model predicts for ``step`` (2, n), per arm."""
    return -(2.0 * _dot(at.gradient, step) + _dot(step, (at.hessian @ step[..., None])[..., 0]))


def _dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise dot product of (k, n) arrays."""
    return (a * b).sum(axis=1)


def _index(positions: Iterable[int]) -> slice | np.ndarray:
    """A slice when the positions are consecutive (cheaper to index with), else an index array."""
    positions = list(positions)
    if positions == list(range(positions[0], positions[0] + len(positions))):
        return slice(positions[0], positions[0] + len(positions))
    return np.array(positions)


def _is_rigid_transform(T: np.ndarray) -> bool:
    """Finite homogeneous transform with a proper rotation block."""
    if not np.all(np.isfinite(T)) or not np.array_equal(T[3], (0.0, 0.0, 0.0, 1.0)):
        return False
    R = T[:3, :3]
    return bool(np.max(np.abs(R.T @ R - np.eye(3))) <= _ROTATION_TOLERANCE and np.linalg.det(R) > 0.0)


def _box_qp(
    H: np.ndarray, g: np.ndarray, lower: np.ndarray, upper: np.ndarray, unconstrained: np.ndarray
) -> np.ndarray:
    """argmin ½xᵀHx + gᵀx subject to lower ≤ x ≤ upper, for H positive definite and lower ≤ 0 ≤ upper.

    Primal active-set method; ``unconstrained`` (= −H⁻¹g) picks the bounds held at the start, the free
    coordinates start at 0, which is feasible. Exact after finitely many steps.
    """
    held = np.where(unconstrained < lower, -1, np.where(unconstrained > upper, 1, 0))  # −1 lower, +1 upper
    x = np.where(held < 0, lower, np.where(held > 0, upper, 0.0))
    for _ in range(4 * g.size + 4):
        free = held == 0
        target = x.copy()
        if free.any():
            rhs = -(g[free] + H[free][:, ~free] @ x[~free])
            target[free] = np.linalg.solve(H[free][:, free], rhs)
        step = target - x
        # Largest feasible fraction of the step, and the bound that limits it.
        with np.errstate(divide="ignore", invalid="ignore"):
            to_lower = np.where(free & (step < 0.0), (lower - x) / step, np.inf)
            to_upper = np.where(free & (step > 0.0), (upper - x) / step, np.inf)
        limits = np.minimum(to_lower, to_upper)
        blocking = int(np.argmin(limits))
        if limits[blocking] < 1.0:
            x = x + max(limits[blocking], 0.0) * step
            held[blocking] = -1 if to_lower[blocking] <= to_upper[blocking] else 1
            x[blocking] = lower[blocking] if held[blocking] < 0 else upper[blocking]
            continue
        x = target
        # Optimal on this face: release the held bound whose multiplier has the wrong sign, if any.
        gradient = H @ x + g
        wrong_sign = np.where(held < 0, -gradient, np.where(held > 0, gradient, 0.0))
        worst = int(np.argmax(wrong_sign))
        if wrong_sign[worst] <= 1e-12:
            return x
        held[worst] = 0
    return x
