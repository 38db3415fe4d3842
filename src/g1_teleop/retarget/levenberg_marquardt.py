"""The dual-arm IK's solver: Levenberg-Marquardt warm-started from the measured arm joints, each step a small QP
(DAQP: Arnström, Bemporad and Axehill 2022, "A dual active-set solver for embedded quadratic programming using
recursive LDLᵀ updates") within the joint bounds and the clearance constraints linearised at the current point.
ROS-free.
"""

from __future__ import annotations

import daqp
import numpy as np

from g1_teleop.retarget.arm_ik_config import ArmIKConfig
from g1_teleop.retarget.arm_ik_problem import ArmIKProblem, Linearization
from g1_teleop.retarget.whole_body_config import WholeBodyConfig
from g1_teleop.retarget.whole_body_problem import WholeBodyProblem

_INITIAL_DAMPING = 1e-3  # initial Levenberg-Marquardt damping, relative to the largest Hessian diagonal entry
_CLEARANCE_MARGIN_M = 5e-4  # steps aim this far beyond min_clearance_m, so linearisation errors stay outside
_MAX_CLEARANCE_GAIN_M = 0.02  # per step, from a start in collision (keeps the constraints satisfiable)
_UNBOUNDED = 1e30
_DAQP_SOFT = 8  # DAQP constraint sense: soft (violated as little as possible when the QP is infeasible)


class LevenbergMarquardt:
    """Minimises an ``ArmIKProblem`` (or a problem with the same ``lower``, ``upper``, ``min_clearance_m`` and
    ``linearize``, as ``whole_body_problem.WholeBodyProblem``) with the stopping rules of ``config``
    (max_iterations, step_tolerance_rad, cost_tolerance)."""

    def __init__(self, problem: ArmIKProblem | WholeBodyProblem, config: ArmIKConfig | WholeBodyConfig) -> None:
        self._problem = problem
        self._config = config
        self._eye = np.eye(problem.lower.size)

    def minimize(self, start: np.ndarray, parameters: np.ndarray) -> tuple[Linearization, bool, int]:
        """Levenberg-Marquardt from ``start`` (arm joints in the order of x, rad; clipped to the bounds), each
        step a QP within the joint bounds and the linearised clearance constraints.

        parameters: the problem's parameters of this solve (``ArmIKProblem.parameters``). Steps are accepted
        when they lower the objective and stay collision-free; from a start in collision, when they reduce the
        violation (feasibility first). Returns the last accepted linearization (the best point found: the
        objective never rises once collision-free, so a solve stopped by the iteration cap moves towards the
        optimum and never oscillates), whether it converged, and the number of kinematics evaluations.
        """
        problem = self._problem
        current = problem.linearize(np.clip(start, problem.lower, problem.upper), parameters)
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
            if converged or evaluations >= self._config.max_iterations or step.size == 0:
                return current, converged, evaluations
            trial = problem.linearize(np.minimum(np.maximum(current.x + step, problem.lower), problem.upper),
                                      parameters)
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

    def _negligible(self, at: Linearization, step: np.ndarray, predicted: float) -> bool:
        """The step (empty: none found) moves no joint by step_tolerance_rad or promises a reduction
        (``predicted``) below cost_tolerance of the objective."""
        cfg = self._config
        return step.size > 0 and (predicted <= cfg.cost_tolerance * at.cost
                                  or float(np.abs(step).max()) < cfg.step_tolerance_rad)

    def _step(self, at: Linearization, damping: float) -> tuple[np.ndarray, float]:
        """argmin gᵀΔ + ½Δᵀ(H + damping·I)Δ within the joint bounds and the linearised clearance constraints
        d + ∇d·Δ ≥ min_clearance (each asking at most _MAX_CLEARANCE_GAIN_M per step), and the cost reduction
        the Gauss-Newton model predicts for it. Where the constraints conflict (deep in collision), they
        become soft: the step violates them as little as it can. No step found: an empty one."""
        hessian = at.hessian + damping * self._eye
        upper, lower = self._problem.upper - at.x, self._problem.lower - at.x
        if at.clearance.size == 0:
            step, _, exitflag, _ = daqp.solve(hessian, at.gradient, at.clearance_gradient, upper, lower)
        else:
            required = np.minimum(self._problem.min_clearance_m + _CLEARANCE_MARGIN_M - at.clearance,
                                  _MAX_CLEARANCE_GAIN_M)
            problem = (hessian, at.gradient, at.clearance_gradient,
                       np.concatenate([upper, np.full(at.clearance.size, _UNBOUNDED)]),
                       np.concatenate([lower, required]))
            step, _, exitflag, _ = daqp.solve(*problem)
            if exitflag < 1:
                sense = np.zeros(at.x.size + at.clearance.size, dtype=np.int32)
                sense[at.x.size:] = _DAQP_SOFT
                step, _, exitflag, _ = daqp.solve(*problem, sense)
        if exitflag < 1:
            return np.empty(0), 0.0
        return step, -float(step @ (at.hessian @ step + 2.0 * at.gradient))
