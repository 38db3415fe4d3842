"""The dual-arm IK problem at one point: the objective (``ik_objective``) with its gradient and Gauss-Newton
Hessian, the joint bounds and the clearance constraints (``clearance_constraints``), all from one CasADi
function of the arm joints compiled to machine code (``compiled_function``). ROS-free.

Frames: end-effector poses and targets in the fixed-base model's world frame, the pelvis.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import casadi as ca
import numpy as np

from g1_teleop.core.compiled_function import CompiledFunction
from g1_teleop.core.symbolic_kinematics import joint_placements
from g1_teleop.retarget.arm_chains import ArmChains
from g1_teleop.retarget.clearance_constraints import ClearanceConstraints
from g1_teleop.retarget.ik_objective import hand_tracking_objective
from g1_teleop.retarget.self_collision import ArmCollisionModel


@dataclass(slots=True)
class Linearization:
    """Objective, gradient and Gauss-Newton Hessian at arm joints x, and the clearance constraints there.

    Vectors over the 14 arm joints follow the chains (the order of x): the left arm's 7 joints, then the
    right arm's.
    """

    x: np.ndarray  # (14,) arm joints, rad
    cost: float
    gradient: np.ndarray  # (14,), half the true gradient
    hessian: np.ndarray  # (14, 14), half the Gauss-Newton Hessian
    errors: np.ndarray  # (4,) position (m) then rotation (rad) errors, left and right
    clearance: np.ndarray  # (k,) m, signed distances of the close collision pairs
    clearance_gradient: np.ndarray  # (k, 14) their gradients, m/rad
    smallest_clearance: float  # m, over every monitored pair (inf without a collision model)
    violation: float  # m, how far smallest_clearance is below the minimum (0: collision-free)


class ArmIKProblem:
    """The objective and constraints of the dual-arm IK over x, the arm joints in chain order.

    weights: (position per m², rotation per rad², posture per rad², measured per rad²) of the objective.
    collision: proxies of the arms and of what they may touch, built on the chains' model; with it, the
    clearance constraints keep ``min_clearance_m`` (m) between them. None: no self-collision avoidance.
    """

    def __init__(self, chains: ArmChains, weights: Sequence[float], min_clearance_m: float,
                 collision: ArmCollisionModel | None = None) -> None:
        self.chains = chains
        self.min_clearance_m = min_clearance_m
        self.lower, self.upper = chains.x_lower, chains.x_upper
        """Joint bounds of x (rad)."""
        self._clearance = (None if collision is None
                          else ClearanceConstraints(collision, chains.model, chains.joints[0] + chains.joints[1],
                                                    min_clearance_m))
        self._weights = np.asarray(weights, dtype=float)
        self._no_constraints = np.empty((0, chains.size))
        self._function = CompiledFunction(self._symbolic_function())

    def parameters(self, q: np.ndarray, measured: np.ndarray, targets: Sequence[np.ndarray]) -> np.ndarray:
        """The parameters of one solve: model configuration q (its arm entries ignored), measured arm joints
        (the order of x, rad) and the (left, right) targets (4x4, pelvis frame, m)."""
        return np.concatenate([q, measured, *(t[:3, :].ravel(order="F") for t in targets), self._weights])

    def linearize(self, x: np.ndarray, parameters: np.ndarray) -> Linearization:
        """Objective terms and clearance constraints at arm joints x (the order of x, rad)."""
        cost, gradient, hessian, errors, clearance, direction, center_jacobians = self._function(x, parameters)
        n = x.size
        if self._clearance is None:
            close, clearance_gradient, smallest = clearance.copy(), self._no_constraints, math.inf
        else:
            close, clearance_gradient, smallest = self._clearance.linearize(clearance, direction, center_jacobians)
        return Linearization(
            x=x,
            cost=float(cost[0]),
            gradient=gradient.copy(),
            hessian=hessian.reshape(n, n).copy(),
            errors=errors.copy(),
            clearance=close,
            clearance_gradient=clearance_gradient,
            smallest_clearance=smallest,
            violation=max(0.0, self.min_clearance_m - smallest),
        )

    def _symbolic_function(self) -> ca.Function:
        """The objective's value, half gradient and half Gauss-Newton Hessian, the (left, right) position and
        rotation errors, and every monitored clearance with its gradient, at arm joints x (the order of x), as
        one CasADi function of x and the parameters of a solve (``parameters``)."""
        chains = self.chains
        model, n = chains.model, chains.size
        x = ca.SX.sym("x", n)
        q_in, measured = ca.SX.sym("q", model.nq), ca.SX.sym("measured", n)
        targets, weights = ca.SX.sym("targets", 12, 2), ca.SX.sym("weights", 4)
        arm_slot = {int(column): k for k, column in enumerate(chains.x_idx_q)}
        q = ca.vertcat(*[x[arm_slot[i]] if i in arm_slot else q_in[i] for i in range(model.nq)])
        frames = [model.frames[f] for f in chains.frame_ids]
        joints = [f.parentJoint for f in frames] + (self._clearance.joints if self._clearance is not None else [])
        placements = joint_placements(model, q, joints)
        end_effectors = [placements[f.parentJoint].transform(f.placement.rotation, f.placement.translation)
                         for f in frames]
        outputs = hand_tracking_objective(x, measured, targets, weights, end_effectors)
        parameters = ca.vertcat(q_in, measured, ca.vec(targets), weights)
        if self._clearance is None:
            outputs |= {"clearance": ca.SX(0, 1), "direction": ca.SX(3, 0), "center_jacobians": ca.SX(3 * n, 0)}
            return ca.Function("g1_arm_ik", [x, parameters], [ca.densify(v) for v in outputs.values()],
                               ["x", "parameters"], list(outputs))
        # The arms' sphere centres and their Jacobians here; the pair distances in the collision model's
        # mapped kernels, composed below.
        kinematics = ca.Function("g1_arm_kinematics", [x, parameters],
                                 [*outputs.values(), *self._clearance.symbolic_kinematics(placements)])
        x_mx, parameters_mx = ca.MX.sym("x", n), ca.MX.sym("parameters", parameters.numel())
        *values, centers_mx, jacobians_mx, poses_mx = kinematics(x_mx, parameters_mx)
        clearance = self._clearance.distance_function()(centers_mx, poses_mx)
        return ca.Function("g1_arm_ik", [x_mx, parameters_mx],
                           [ca.densify(v) for v in [*values, *clearance, jacobians_mx]], ["x", "parameters"],
                           [*outputs, "clearance", "direction", "center_jacobians"])
