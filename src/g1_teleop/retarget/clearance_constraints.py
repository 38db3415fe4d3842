"""The IK's self-collision constraints: the clearance d between the arms' collision proxies and what they may
touch, kept above a minimum, linearised at the current arm joints x as d + ∇d·Δx ≥ d_min (a limit of the step
in the manner of mink's CollisionAvoidanceLimit: kevinzakka/mink, mink/limits/collision_avoidance_limit.py). ROS-free.

The symbolic half goes into the IK's compiled function: the proxies' sphere centres and their Jacobians over
x, the static geoms' placements, then the pair distances of ``ArmCollisionModel``. The numeric half turns that
function's outputs into the constraints of one step.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import casadi as ca
import numpy as np
import pinocchio as pin

from g1_teleop.core.symbolic_kinematics import SymbolicPlacement, point_jacobian
from g1_teleop.retarget.self_collision import ArmCollisionModel

_ACTIVATION_M = 0.05  # collision pairs closer than min_clearance_m + this become constraints of the step


class ClearanceConstraints:
    """Clearance constraints over the arm joints x (the order of ``chain_joints``, the Pinocchio joints of x).

    collision: the arms' proxies and the geoms they may touch, built on ``model``; min_clearance_m: the
    smallest clearance kept (m).
    """

    def __init__(self, collision: ArmCollisionModel, model: pin.Model, chain_joints: Sequence[int],
                 min_clearance_m: float) -> None:
        self.collision = collision
        self.min_clearance_m = min_clearance_m
        self._model = model
        self._chain_joints = list(chain_joints)
        n = len(self._chain_joints)
        self._pair_spheres = collision.pair_spheres()  # per row: its two spheres, -1 (a zero Jacobian): static
        self._center_jacobians = np.zeros((collision.sphere_count + 1, 3, n))
        self._no_constraints = np.empty((0, n))

    @property
    def joints(self) -> list[int]:
        """Pinocchio joints whose placements ``symbolic_kinematics`` needs."""
        return self.collision.joints

    def symbolic_kinematics(self, placements: dict[int, SymbolicPlacement]) -> tuple[ca.SX, ca.SX, ca.SX]:
        """The sphere centres (3 x N, m), their Jacobians over x (3n x N: one column vec(∂c/∂x) per sphere) and
        the static geoms' placements (12 x S), from the joint placements (functions of x)."""
        centers = self.collision.sphere_centers(placements)
        center_jacobians = ca.horzcat(*[
            ca.vec(point_jacobian(self._model, placements, self._chain_joints, joint, centers[:, s]))
            for s, joint in enumerate(self.collision.sphere_joint)])
        return centers, center_jacobians, self.collision.static_poses(placements)

    def distance_function(self) -> ca.Function:
        """The pair distances and directions of sphere centres and static placements (see
        ``ArmCollisionModel.clearance_function``)."""
        return self.collision.clearance_function()

    def linearize(self, distance: np.ndarray, direction: np.ndarray,
                  center_jacobians: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
        """The constraints of one step from the compiled function's outputs at x: the clearances (k,) m of the
        pairs close enough to matter, their gradients (k, n) over x, and the smallest clearance over every
        monitored pair (m, capped at the collision model's search range)."""
        n = len(self._chain_joints)
        close = (distance < self.min_clearance_m + _ACTIVATION_M).nonzero()[0]
        if close.size:  # the pair's direction times ∂c/∂x of its first sphere minus that of its second
            jacobians = self._center_jacobians  # (sphere, xyz, joint); a last, zero one for "no second sphere"
            jacobians[:-1] = center_jacobians.reshape(-1, n, 3).transpose(0, 2, 1)
            first, second = self._pair_spheres[0][close], self._pair_spheres[1][close]
            pair_direction = direction.reshape(-1, 3)[close]
            gradient = (pair_direction[:, None, :] @ (jacobians[first] - jacobians[second]))[:, 0]
        else:
            gradient = self._no_constraints
        smallest = min(float(distance.min()), self.collision.search_range_m) if distance.size else math.inf
        return distance[close], gradient, smallest
