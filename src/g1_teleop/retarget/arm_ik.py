"""Dual-arm inverse kinematics in the pelvis frame, with gravity feed-forward (g1_conventions §8).

The objective (the form of OpenWBT's G1_29_ArmIK), over the 14 arm joints q with the rest of the body
locked at the measured pose:

    w_p·Σ‖p_ee − p*‖² + w_R·Σ‖log3(R_ee·R*ᵀ)‖² + w_0·‖q‖² + w_m·‖q − q_measured‖²

subject to the joint bounds and, with a collision model, a minimum clearance between the arms and the
trunk, the thighs and each other. End-effector poses are taken in the model's world frame, which for the
fixed-base model is the pelvis. Solved by Levenberg-Marquardt warm-started from the measured arm joints:
each step is a small QP (DAQP) within the joint bounds and the clearance constraints linearised at the
current point, d + ∇d·Δq ≥ d_min. One evaluation (both arms' kinematics, the objective with its gradient
and Gauss-Newton Hessian, every clearance with its direction) is a single CasADi function compiled to
machine code (``compiled_function``); Pinocchio serves the rest (gravity torques, differential IK).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import casadi as ca
import daqp
import numpy as np
import pinocchio as pin

from g1_teleop.core.compiled_function import CompiledFunction
from g1_teleop.core.filters import WeightedMovingFilter
from g1_teleop.core.pinocchio_model import PinJointMap
from g1_teleop.retarget.self_collision import ArmCollisionModel
from g1_teleop.retarget.symbolic_kinematics import joint_placements, log3, point_jacobian

_ROTATION_TOLERANCE = 1e-3  # max |RᵀR − I| entry for a target rotation to be usable
_INITIAL_DAMPING = 1e-3  # initial Levenberg-Marquardt damping, relative to the largest Hessian diagonal entry
_ACTIVATION_M = 0.05  # collision pairs closer than min_clearance_m + this become constraints of the step
_CLEARANCE_MARGIN_M = 5e-4  # steps aim this far beyond min_clearance_m, so linearisation errors stay outside
_MAX_CLEARANCE_GAIN_M = 0.02  # per step, from a start in collision (keeps the constraints satisfiable)
_UNBOUNDED = 1e30
_DAQP_SOFT = 8  # DAQP constraint sense: soft (violated as little as possible when the QP is infeasible)


@dataclass(frozen=True)
class ArmIKConfig:
    """Weights of the IK objective and solver settings.

    position_weight: per m² of end-effector position error; rotation_weight: per rad² of orientation
    error; posture_weight: on ‖q‖² (rad²); measured_weight: on ‖q − q_measured‖² (rad²).
    OpenWBT uses 50, 1, 0.02, 0.1. With 0.02 the posture term pulls the answer 4-9 mm and 30-65 mrad away
    from reachable targets on the G1; 0.0002 keeps that pull around 1 mm at worst under steady tracking
    while still drawing the redundant elbow swivel slowly towards q = 0.
    min_clearance_m: smallest distance kept between the arms' collision proxies and the trunk, the thighs and
    the other arm (m; needs a collision model, see ``DualArmIK``).
    max_iterations: kinematics evaluations per solve; a solve still short of convergence then returns the
    best collision-free point it found (``ArmIKResult.converged`` False) and the next solve, warm-started
    from the arm that follows it, goes on. 8 bounds the solve time: reachable targets 0.1 rad away converge
    in 3-4, unreachable ones take 15-30 to converge fully but are within ~1 cm of that answer after 8.
    step_tolerance_rad, cost_tolerance: an arm has converged when its undamped Gauss-Newton step (within
    the bounds) moves no joint more than step_tolerance_rad, or is predicted to lower its objective by less
    than cost_tolerance times the objective.
    filter_weights: output filter (``WeightedMovingFilter``), newest first; (1.0,) disables it.
    """

    position_weight: float = 50.0
    rotation_weight: float = 1.0
    posture_weight: float = 0.0002
    measured_weight: float = 0.1
    min_clearance_m: float = 0.01
    max_iterations: int = 8
    step_tolerance_rad: float = 1e-5
    cost_tolerance: float = 1e-4
    filter_weights: tuple[float, ...] = (0.4, 0.3, 0.2, 0.1)
    left_frame: str = "left_ee"
    right_frame: str = "right_ee"

    def __post_init__(self) -> None:
        for name in ("rotation_weight", "posture_weight", "measured_weight", "min_clearance_m"):
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


@dataclass(slots=True)
class _Linearization:
    """Objective, gradient and Gauss-Newton Hessian at arm joints x, and the clearance constraints there.

    Vectors over the 14 arm joints follow the chains: the left arm's 7 joints, then the right arm's.
    """

    x: np.ndarray  # (14,) arm joints
    cost: float
    gradient: np.ndarray  # (14,), half the true gradient
    hessian: np.ndarray  # (14, 14), half the Gauss-Newton Hessian
    errors: np.ndarray  # (4,) position (m) then rotation (rad) errors, left and right
    clearance: np.ndarray  # (k,) m, signed distances of the close collision pairs
    clearance_gradient: np.ndarray  # (k, 14) their gradients
    smallest_clearance: float  # m, over every monitored pair (inf without a collision model)
    violation: float  # m, how far smallest_clearance is below the minimum (0: collision-free)


class DualArmIK:
    """Pelvis-frame dual-arm IK on a fixed-base Pinocchio model of the G1.

    model: fixed-base model whose world frame is the pelvis and which has the end-effector frames named
    in the config. joint_names: the body joints in DDS order (the order of ``q_measured``). The arm joints
    are found from the model: those that move one end-effector frame and not the other. Model joints that
    are not in ``joint_names`` (for example hand joints) stay at their neutral value. collision: proxies of
    the arms and of what they may touch, built on the same model; with it, every answer keeps
    ``config.min_clearance_m`` between them. Raises KeyError for body joints the model lacks and ValueError
    for an unsuitable model.
    """

    def __init__(
        self,
        model: pin.Model,
        joint_names: Sequence[str],
        config: ArmIKConfig | None = None,
        collision: ArmCollisionModel | None = None,
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
        self._chains = chains  # Pinocchio joints of each arm (left, right), root to wrist
        # Per arm (left, right): positions in q_arm, and columns of the model's q / v.
        self._columns = np.array([[arm_ids.index(j) for j in chain] for chain in chains])
        self._chain_v = [_index(model.idx_vs[j] for j in chain) for chain in chains]
        self._order = self._columns.ravel()  # q_arm positions of the chain-ordered solver vector
        self._order_q = self._arm_idx_q[self._order]
        self._lower = self.q_lower[self._order]
        self._upper = self.q_upper[self._order]
        n = self._order.size
        self._eye = np.eye(n)
        self._no_constraints = np.empty((0, n))
        self._filter = WeightedMovingFilter(self.config.filter_weights)
        self.collision = collision
        """Arm proxies of the clearance constraints; None: no self-collision avoidance."""
        self._weights = np.array([self.config.position_weight, self.config.rotation_weight,
                                  self.config.posture_weight, self.config.measured_weight])
        self._objective = CompiledFunction(self._symbolic_objective())
        if collision is not None:  # per clearance row: its two spheres, -1 (a zero Jacobian) for a static geom
            self._pair_spheres = collision.pair_spheres()
            self._center_jacobians = np.zeros((collision.sphere_count + 1, 3, n))

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
            return ArmIKResult(measured_arm, self._gravity(q, measured_arm), False, False, nan2, nan2, 0, math.nan)

        solution, converged, iterations = self._minimize(q, measured_arm[self._order], targets)
        q_arm = np.empty(self.arm_indices.size)
        q_arm[self._order] = solution.x
        ok = solution.violation <= 0.0 and bool(np.all(np.isfinite(q_arm)))
        # (the filter's weighted mean of in-bound values can round past a bound)
        q_arm = np.clip(self._filter.update(q_arm), self.q_lower, self.q_upper) if ok else measured_arm
        return ArmIKResult(q_arm, self._gravity(q, q_arm), ok, converged, solution.errors[:2], solution.errors[2:],
                           iterations, solution.smallest_clearance)

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
        """Levenberg-Marquardt from the measured joints, each step a QP within the joint bounds and the
        linearised clearance constraints.

        measured: (14,) measured arm joints in chain order. Steps are accepted when they lower the objective
        and stay collision-free; from a start in collision, when they reduce the violation (feasibility
        first). Returns the last accepted linearization (the best point found: the objective never rises
        once collision-free, so a solve stopped by the iteration cap moves towards the optimum and
        never oscillates), whether it converged, and the number of kinematics evaluations.
        """
        cfg = self.config
        parameters = np.concatenate([q, measured, *(t[:3, :].ravel(order="F") for t in targets), self._weights])
        current = self._linearize(np.clip(measured, self._lower, self._upper), parameters)
        # Damping update of Nielsen (1999): from the ratio of actual to predicted cost reduction.
        damping = _INITIAL_DAMPING * float(np.max(np.diagonal(current.hessian)))
        growth = 2.0
        evaluations = 1
        while True:
            feasible = current.violation <= 0.0
            step, predicted = self._step(current, damping)
            # Converged when the undamped Gauss-Newton model f + 2gᵀΔ + ΔᵀHΔ (gradient and Hessian are stored
            # halved) promises a negligible step or reduction. The damped step is the shorter, with the
            # smaller reduction: only when it looks converged is the undamped one worth a second QP.
            converged = feasible and self._negligible(current, step, predicted) and self._negligible(
                current, *self._step(current, 0.0))
            if converged or evaluations >= cfg.max_iterations or step.size == 0:
                return current, converged, evaluations
            trial = self._linearize(np.minimum(np.maximum(current.x + step, self._lower), self._upper), parameters)
            evaluations += 1
            if feasible:
                accept = trial.violation <= 0.0 and trial.cost < current.cost
                gain = (current.cost - trial.cost) / predicted if predicted > 0.0 else 0.0
            else:
                accept = trial.violation < current.violation
                gain = 0.5  # restoring clearance: keep the damping
            if accept:
                current = trial
                damping *= max(1.0 / 3.0, 1.0 - (2.0 * min(gain, 1.0) - 1.0) ** 3)
                growth = 2.0
            else:
                damping *= growth
                growth *= 2.0

    def _negligible(self, at: _Linearization, step: np.ndarray, predicted: float) -> bool:
        """The step (empty: none found) moves no joint by step_tolerance_rad or promises a reduction
        (``predicted``) below cost_tolerance of the objective."""
        cfg = self.config
        return step.size > 0 and (predicted <= cfg.cost_tolerance * at.cost
                                  or float(np.abs(step).max()) < cfg.step_tolerance_rad)

    def _step(self, at: _Linearization, damping: float) -> tuple[np.ndarray, float]:
        """argmin gᵀΔ + ½Δᵀ(H + damping·I)Δ within the joint bounds and the linearised clearance constraints
        d + ∇d·Δ ≥ min_clearance (each asking at most _MAX_CLEARANCE_GAIN_M per step), and the cost reduction
        the Gauss-Newton model predicts for it. Where the constraints conflict (deep in collision), they
        become soft: the step violates them as little as it can. No step found: an empty one."""
        hessian = at.hessian + damping * self._eye
        upper, lower = self._upper - at.x, self._lower - at.x
        if at.clearance.size == 0:
            step, _, exitflag, _ = daqp.solve(hessian, at.gradient, at.clearance_gradient, upper, lower)
        else:
            required = np.minimum(self.config.min_clearance_m + _CLEARANCE_MARGIN_M - at.clearance,
                                  _MAX_CLEARANCE_GAIN_M)
            problem = (hessian, at.gradient, at.clearance_gradient,
                       np.concatenate([upper, np.full(at.clearance.size, _UNBOUNDED)]),
                       np.concatenate([lower, required]))
            step, _, exitflag, _ = daqp.solve(*problem)
            if exitflag < 1:
                sense = np.zeros(self._order.size + at.clearance.size, dtype=np.int32)
                sense[self._order.size:] = _DAQP_SOFT
                step, _, exitflag, _ = daqp.solve(*problem, sense)
        if exitflag < 1:
            return np.empty(0), 0.0
        return step, -float(step @ (at.hessian @ step + 2.0 * at.gradient))

    def _linearize(self, x: np.ndarray, parameters: np.ndarray) -> _Linearization:
        """Objective terms and clearance constraints at arm joints x (14,, chain order); parameters as
        ``_symbolic_objective`` takes them."""
        cost, gradient, hessian, errors, clearance, direction, center_jacobians = self._objective(x, parameters)
        n = x.size
        close = (clearance < self.config.min_clearance_m + _ACTIVATION_M).nonzero()[0]
        if close.size:  # the pair's direction times ∂c/∂x of its first sphere minus that of its second
            jacobians = self._center_jacobians  # (sphere, xyz, joint); a last, zero one for "no second sphere"
            jacobians[:-1] = center_jacobians.reshape(-1, n, 3).transpose(0, 2, 1)
            first, second = self._pair_spheres[0][close], self._pair_spheres[1][close]
            direction = direction.reshape(-1, 3)[close]
            clearance_gradient = (direction[:, None, :] @ (jacobians[first] - jacobians[second]))[:, 0]
        else:
            clearance_gradient = self._no_constraints
        smallest = min(float(clearance.min()), self.collision.search_range_m) if clearance.size else math.inf
        return _Linearization(
            x=x,
            cost=float(cost[0]),
            gradient=gradient.copy(),
            hessian=hessian.reshape(n, n).copy(),
            errors=errors.copy(),
            clearance=clearance[close],
            clearance_gradient=clearance_gradient,
            smallest_clearance=smallest,
            violation=max(0.0, self.config.min_clearance_m - smallest),
        )

    def _symbolic_objective(self) -> ca.Function:
        """The objective's value, half gradient and half Gauss-Newton Hessian, the (left, right) position
        and rotation errors, and every monitored clearance with its gradient, at arm joints x (14, chain
        order), as one CasADi function of x and the parameters of a solve: the model configuration q
        (its arm entries ignored), the measured arm joints (14, chain order), the two targets' 3x4 [R | p]
        (column-major) and the weights (position, rotation, posture, measured)."""
        model, n = self._model, self._order.size
        x = ca.SX.sym("x", n)
        q_in, measured = ca.SX.sym("q", model.nq), ca.SX.sym("measured", n)
        targets, weights = ca.SX.sym("targets", 12, 2), ca.SX.sym("weights", 4)
        arm_slot = {int(column): k for k, column in enumerate(self._order_q)}
        q = ca.vertcat(*[x[arm_slot[i]] if i in arm_slot else q_in[i] for i in range(model.nq)])
        frames = [model.frames[f] for f in self._frame_ids]
        joints = [f.parentJoint for f in frames] + (self.collision.joints if self.collision else [])
        placements = joint_placements(model, q, joints)
        residuals = []
        for arm, frame in enumerate(frames):
            ee = placements[frame.parentJoint].transform(frame.placement.rotation, frame.placement.translation)
            target_R, target_p = ca.reshape(targets[:9, arm], 3, 3), targets[9:, arm]
            residuals += [ee.world_p - target_p, log3(target_R.T @ ee.world_R)]
        errors = ca.vertcat(*[ca.norm_2(r) for r in residuals[0::2] + residuals[1::2]])
        root_weights = ca.sqrt(ca.vertcat(weights[0], weights[0], weights[0], weights[1], weights[1], weights[1]))
        residual = ca.vertcat(*residuals) * ca.repmat(root_weights, 2, 1)
        J = ca.jacobian(residual, x)
        offset = x - measured
        outputs = {
            "cost": ca.sumsqr(residual) + weights[2] * ca.sumsqr(x) + weights[3] * ca.sumsqr(offset),
            "gradient": J.T @ residual + weights[2] * x + weights[3] * offset,
            "hessian": J.T @ J + (weights[2] + weights[3]) * ca.SX.eye(n),
            "errors": errors,  # position left, right; rotation left, right
        }
        parameters = ca.vertcat(q_in, measured, ca.vec(targets), weights)
        if self.collision is None:
            outputs |= {"clearance": ca.SX(0, 1), "direction": ca.SX(3, 0), "center_jacobians": ca.SX(3 * n, 0)}
            return ca.Function("g1_arm_ik", [x, parameters], [ca.densify(v) for v in outputs.values()],
                               ["x", "parameters"], list(outputs))
        # The arms' sphere centres and their Jacobians here; the pair distances in the collision model's
        # mapped kernels, composed below.
        centers = self.collision.sphere_centers(placements)
        chain_joints = self._chains[0] + self._chains[1]
        center_jacobians = ca.horzcat(*[ca.vec(point_jacobian(model, placements, chain_joints, joint, centers[:, s]))
                                        for s, joint in enumerate(self.collision.sphere_joint)])
        kinematics = ca.Function("g1_arm_kinematics", [x, parameters],
                                 [*outputs.values(), centers, center_jacobians,
                                  self.collision.static_poses(placements)])
        x_mx, parameters_mx = ca.MX.sym("x", n), ca.MX.sym("parameters", parameters.numel())
        *values, centers_mx, jacobians_mx, poses_mx = kinematics(x_mx, parameters_mx)
        clearance = self.collision.clearance_function()(centers_mx, poses_mx)
        return ca.Function("g1_arm_ik", [x_mx, parameters_mx],
                           [ca.densify(v) for v in [*values, *clearance, jacobians_mx]], ["x", "parameters"],
                           [*outputs, "clearance", "direction", "center_jacobians"])


def _check_number(name: str, value: object, positive: bool) -> None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if not ok or value < 0.0 or (positive and value == 0.0):  # type: ignore[operator]
        bound = "> 0" if positive else ">= 0"
        raise ValueError(f"ArmIKConfig.{name}: expected a finite number {bound}, got {value!r}")


def _index(positions: Iterable[int]) -> slice | np.ndarray:
    """A slice when the positions are consecutive (cheaper to index with), else an index array."""
    positions = list(positions)
    if positions == list(range(positions[0], positions[0] + len(positions))):
        return slice(positions[0], positions[0] + len(positions))
    return np.array(positions)


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
