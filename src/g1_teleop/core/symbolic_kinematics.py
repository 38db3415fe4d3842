"""Forward kinematics of a Pinocchio model as CasADi expressions (PyPI's `pin` has no pinocchio.casadi).

Each joint's placement in the model's world frame (for the fixed-base G1: the pelvis; for the floating-base one,
the pelvis again when the placements start at its root joint) is written out as world_R_joint (3x3) and
world_p_joint (3,) in the symbols of the configuration q, from the model's constant joint placements and the
joints' own motions. ROS-free.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import casadi as ca
import numpy as np
import pinocchio as pin

_AXES = {"JointModelRX": (1.0, 0.0, 0.0), "JointModelRY": (0.0, 1.0, 0.0), "JointModelRZ": (0.0, 0.0, 1.0)}


@dataclass(frozen=True)
class SymbolicPlacement:
    """world_R (3x3) and world_p (3x1) of one frame, CasADi expressions (m, rad); for a joint's frame also
    world_axis (3x1), the direction of its rotation axis."""

    world_R: ca.SX
    world_p: ca.SX
    world_axis: ca.SX | None = None

    def transform(self, local_R: np.ndarray, local_p: np.ndarray) -> SymbolicPlacement:
        """This placement composed with a constant one given in this frame."""
        return SymbolicPlacement(self.world_R @ ca.DM(local_R), self.world_R @ ca.DM(local_p) + self.world_p)

    def point(self, local_p: np.ndarray) -> ca.SX:
        """World position (3x1) of a point fixed in this frame (local_p in m)."""
        return self.world_R @ ca.DM(local_p) + self.world_p


def joint_placements(model: pin.Model, q: ca.SX, joints: Iterable[int], base: int = 0) -> dict[int, SymbolicPlacement]:
    """Placements of ``joints`` and of every joint supporting them up from ``base``, as expressions of q
    (model.nq symbols), in the frame of joint ``base``: the model's world (0), or a floating base's root joint
    for placements relative to the base (its own motion, and every joint above it, then never enter).

    Supports revolute joints (about x, y, z or an unaligned axis), the G1's only kind. Raises ValueError
    for a joint not below ``base`` or for another joint type on the way.
    """
    joints = list(joints)
    if outside := [model.names[j] for j in joints if base not in model.supports[j]]:
        raise ValueError(f"symbolic kinematics: joints {outside} are not below {model.names[base]!r}")
    identity = SymbolicPlacement(ca.SX.eye(3), ca.SX.zeros(3, 1))
    placements: dict[int, SymbolicPlacement] = {j: identity for j in model.supports[base]}
    for joint in sorted({s for j in joints for s in model.supports[j]}):
        if joint in placements:
            continue
        parent = placements[model.parents[joint]]
        fixed = model.jointPlacements[joint]
        at_zero = parent.transform(fixed.rotation, fixed.translation)
        axis = _axis(model, joint)
        placements[joint] = SymbolicPlacement(at_zero.world_R @ _rotation(axis, q[model.idx_qs[joint]]),
                                              at_zero.world_p, at_zero.world_R @ ca.DM(axis))
    return placements


def point_jacobian(model: pin.Model, placements: dict[int, SymbolicPlacement], joints: Sequence[int],
                   body_joint: int, world_p: ca.SX) -> ca.SX:
    """∂world_p/∂q over ``joints`` (3 x len(joints), m/rad) of a point fixed to the body of ``body_joint``:
    axis × (p − joint origin) for each revolute joint that supports it, 0 for the others (and for a base's joint,
    which does not move in its own frame)."""
    supports = set(model.supports[int(body_joint)])
    columns = []
    for j in joints:
        axis = placements[j].world_axis if j in supports else None
        if axis is not None:
            columns.append(ca.cross(axis, world_p - placements[j].world_p))
        else:
            columns.append(ca.SX.zeros(3, 1))
    return ca.horzcat(*columns)


def _axis(model: pin.Model, joint: int) -> np.ndarray:
    """Unit rotation axis of a revolute joint, in its own frame."""
    kind = model.joints[joint].shortname()
    if kind in _AXES:
        return np.array(_AXES[kind])
    if kind == "JointModelRevoluteUnaligned":
        axis = np.asarray(model.joints[joint].extract().axis, dtype=float)
        return axis / np.linalg.norm(axis)
    raise ValueError(f"symbolic kinematics: joint {model.names[joint]!r} is a {kind}; only revolute joints are "
                     "supported")


def _rotation(axis: np.ndarray, angle: ca.SX) -> ca.SX:
    """Rodrigues: rotation by ``angle`` (rad) about the unit ``axis``."""
    skew = ca.DM([[0.0, -axis[2], axis[1]], [axis[2], 0.0, -axis[0]], [-axis[1], axis[0], 0.0]])
    return ca.DM.eye(3) + ca.sin(angle) * skew + (1.0 - ca.cos(angle)) * (skew @ skew)


def log3(R: ca.SX) -> ca.SX:
    """Rotation vector (3x1, rad) of a rotation matrix: θ·axis with θ in [0, π], smooth through θ = 0."""
    v = 0.5 * ca.vertcat(R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1])  # sin θ · axis
    cos_theta = 0.5 * (R[0, 0] + R[1, 1] + R[2, 2] - 1.0)
    sin_sq = ca.dot(v, v)
    sin_theta = ca.sqrt(ca.fmax(sin_sq, 1e-30))
    # θ / sin θ, by its series near θ = 0 (where the quotient and its derivative are 0/0)
    ratio = ca.if_else(ca.logic_and(sin_sq < 1e-12, cos_theta > 0.0), 1.0 + sin_sq / 6.0,
                       ca.atan2(sin_theta, cos_theta) / sin_theta)
    return ratio * v
