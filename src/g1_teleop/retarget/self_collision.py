"""Clearance between the robot's parts that may touch each other (the arms and the trunk, the legs and
the other arm), from the collision geometry of the MuJoCo model. ROS-free.

The pairs of link groups come from the robot configuration (``self_collision`` in config/g1_29dof.yaml);
the geometry is the model's collision geoms. Distances are signed (negative: penetration), in metres.
"""

from __future__ import annotations

from dataclasses import dataclass

import casadi as ca
import mujoco
import numpy as np
import pinocchio as pin

from g1_teleop.core.mujoco_model import MjJointMap
from g1_teleop.core.robot_description import Robot
from g1_teleop.core.rotations import xyzw_from_wxyz
from g1_teleop.core.symbolic_kinematics import SymbolicPlacement


@dataclass(frozen=True)
class Clearance:
    distance_m: float  # smallest signed distance over the monitored pairs (capped at the search range)
    links: tuple[str, str]  # the two links where it occurs


class ClearanceMonitor:
    """Smallest distance between monitored link groups at a joint configuration (DDS order, rad)."""

    def __init__(self, robot: Robot, model: mujoco.MjModel, groups: tuple[str, ...] = ("left_arm", "right_arm"),
                 search_range_m: float = 0.2) -> None:
        """Monitor the configured pairs that involve one of ``groups`` (default: every pair with an arm)."""
        self.model = model
        self.data = mujoco.MjData(model)
        self.joints = MjJointMap.from_model(model, robot.joint_names)
        self.search_range_m = search_range_m
        sc = robot.self_collision
        unknown = [g for g in groups if g not in sc.groups]
        if unknown:
            raise ValueError(f"unknown self-collision groups {unknown}; configured: {sorted(sc.groups)}")

        def geoms(group: str) -> list[int]:
            bodies = {model.body(name).id for name in sc.groups[group]}
            return [g for g in range(model.ngeom) if model.geom_bodyid[g] in bodies and model.geom_contype[g]]

        self.pairs = [(g1, g2) for a, b in sc.pairs if a in groups or b in groups
                      for g1 in geoms(a) for g2 in geoms(b)]
        if not self.pairs:
            raise ValueError(f"no configured self-collision pair involves {groups}")

    def clearance(self, q: np.ndarray) -> Clearance:
        self.data.qpos[self.joints.qpos_adr] = q
        mujoco.mj_kinematics(self.model, self.data)
        best, where = self.search_range_m, self.pairs[0]
        for g1, g2 in self.pairs:
            distance = mujoco.mj_geomDistance(self.model, self.data, g1, g2, self.search_range_m, None)
            if distance < best:
                best, where = distance, (g1, g2)
        names = tuple(self.model.body(self.model.geom_bodyid[g]).name for g in where)
        return Clearance(float(best), names)  # type: ignore[arg-type]


_SDF_BOX, _SDF_CYLINDER, _SDF_CAPSULE = 0, 1, 2
_TINY = 1e-18  # m², under square roots: keeps their derivatives finite at 0 (shifts a distance by 1e-9 m)


class ArmCollisionModel:
    """Clearance between the arms and what they may touch, as CasADi expressions for the IK's constraints.

    The moving groups' collision geoms (forearms, wrists, hands; meshes by their bounding boxes) are
    covered by spheres whose union contains each geom (grid cells of at most ``sphere_spacing_m``, each
    sphere through its cell's corners), so a distance measured on the spheres never exceeds the distance of
    the real geoms: a configuration these proxies call clear is clear for the MuJoCo geometry. The other
    geoms (trunk boxes, head, thigh and shin cylinders) keep their exact shapes (signed distance functions
    of boxes, cylinders and capsules). Only the configured pairs (``self_collision`` in the robot config)
    that involve a moving group are monitored.

    Frames: everything in the Pinocchio model's world frame (the pelvis for the fixed-base model).
    """

    def __init__(self, robot: Robot, mj_model: mujoco.MjModel, pin_model, moving: tuple[str, str] = ("left_arm",
                 "right_arm"), sphere_spacing_m: float = 0.06, search_range_m: float = 0.2) -> None:
        sc = robot.self_collision
        unknown = [g for g in moving if g not in sc.groups]
        if unknown:
            raise ValueError(f"unknown self-collision groups {unknown}; configured: {sorted(sc.groups)}")
        if not sphere_spacing_m > 0 or not search_range_m > 0:
            raise ValueError("ArmCollisionModel: sphere_spacing_m and search_range_m must be positive")
        self.search_range_m = search_range_m
        """Distances are of interest up to this far (m); the smallest one is reported capped at it."""
        pairs = [(a, b) if a in moving else (b, a) for a, b in sc.pairs if a in moving or b in moving]
        if not pairs:
            raise ValueError(f"no configured self-collision pair involves {moving}")

        def geoms(group: str) -> list[tuple[int, int, pin.SE3]]:
            """(MuJoCo geom, Pinocchio joint, joint_T_shape) of each collision geom of the group."""
            found = []
            for body in sc.groups[group]:
                if not pin_model.existFrame(body):
                    raise ValueError(f"ArmCollisionModel: link {body!r} (group {group}) is not in the Pinocchio model")
                frame = pin_model.frames[pin_model.getFrameId(body)]
                body_id = mj_model.body(body).id
                for g in range(mj_model.ngeom):
                    if mj_model.geom_bodyid[g] == body_id and mj_model.geom_contype[g]:
                        geom_xyzw = xyzw_from_wxyz(mj_model.geom_quat[g])
                        body_T_geom = pin.XYZQUATToSE3(np.r_[mj_model.geom_pos[g], geom_xyzw])
                        geom_T_shape = pin.SE3(np.eye(3), _shape(mj_model, g)[2])
                        found.append((g, frame.parentJoint, frame.placement * body_T_geom * geom_T_shape))
            return found

        # Moving geoms: their covering spheres (joint, centre in the joint frame, radius), group by group.
        spheres = []
        for k, group in enumerate(moving):
            for g, joint, joint_T_geom in geoms(group):
                kind, size, _ = _shape(mj_model, g)
                centers, radius = _sphere_cover(kind, size, sphere_spacing_m)
                spheres += [(k, joint, joint_T_geom.act(c), radius) for c in centers]
        self._spheres = spheres
        self.sphere_group = np.array([k for k, *_ in spheres])
        """Which moving group (0, 1) each sphere belongs to, shape (N,)."""
        self.sphere_joint = np.array([j for _, j, _, _ in spheres])
        """The Pinocchio joint each sphere rides on, shape (N,)."""
        radius = np.array([r for *_, r in spheres])
        # Static geoms (the locked joints place them): (joint, joint_T_shape, kind, size, group).
        static = [(joint, joint_T_shape, *_shape(mj_model, g)[:2], group)
                  for group in sorted({b for _, b in pairs if b not in moving})
                  for g, joint, joint_T_shape in geoms(group)]
        self._static = [(joint, joint_T_shape) for joint, joint_T_shape, *_ in static]
        self._static_shapes = [(kind, size) for _, _, kind, size, _ in static]
        # Sphere/static pairs of groups that may not touch are computed but kept out of reach (+1 km).
        self._out_of_play = np.array([[0.0 if (moving[k], group) in pairs else 1e3 for *_, group in static]
                                      for k, *_ in spheres]).T  # (S, N)
        self._radius = radius
        arm_vs_arm = (moving[0], moving[1]) in pairs or (moving[1], moving[0]) in pairs
        self._first = np.flatnonzero(self.sphere_group == 0)
        self._second = np.flatnonzero(self.sphere_group == 1) if arm_vs_arm else np.empty(0, dtype=int)
        self.joints = sorted({j for _, j, _, _ in spheres} | {j for j, _ in self._static})
        """Pinocchio joints whose placements ``sphere_centers`` and ``static_poses`` need."""

    @property
    def sphere_count(self) -> int:
        return len(self._spheres)

    def pair_spheres(self) -> tuple[np.ndarray, np.ndarray]:
        """The moving spheres of each row of ``clearance_function``'s outputs: (first (k,), second (k,),
        -1 for the rows of a sphere against a static geom)."""
        n_static = len(self._static)
        first = np.r_[np.repeat(np.arange(self.sphere_count), n_static), np.repeat(self._first, self._second.size)]
        second = np.r_[np.full(self.sphere_count * n_static, -1), np.tile(self._second, self._first.size)]
        return first, second

    def sphere_centers(self, placements: dict[int, SymbolicPlacement]) -> ca.SX:
        """World positions (3 x N, m) of the moving spheres; ``placements``: those of ``self.joints``."""
        return ca.horzcat(*[placements[j].point(c) for _, j, c, _ in self._spheres])

    def static_poses(self, placements: dict[int, SymbolicPlacement]) -> ca.SX:
        """World placements of the static geoms, one column [vec(world_R); world_p] (12 x S) each."""
        poses = [placements[j].transform(T.rotation, T.translation) for j, T in self._static]
        return ca.horzcat(*[ca.vertcat(ca.vec(p.world_R), p.world_p) for p in poses])

    def clearance_function(self) -> ca.Function:
        """Signed distances of every monitored pair and their gradients over the first sphere's centre.

        Inputs: sphere centres (3 x N, world, m), static poses (12 x S). Outputs: distance (k x 1, m;
        negative: penetration) and direction (3 x k: its gradient over the centre of the pair's first
        sphere; over the second sphere's, its opposite). Rows (see ``pair_spheres``): each sphere against
        every static geom (pairs of groups that may not touch 1 km away), then each sphere of group 0
        against each of group 1. The pair computations are kernels mapped over the spheres, so the generated
        code stays small.
        """
        n_static = len(self._static)
        centers = ca.MX.sym("centers", 3, self.sphere_count)
        poses = ca.MX.sym("static_poses", 12, n_static)
        shapes = _sphere_shapes_kernel(self._static_shapes).map("sphere_shapes", "serial", self.sphere_count, [1], [])
        d, direction = shapes(centers, poses, self._radius[None, :], self._out_of_play)
        distances, directions = [ca.reshape(d, -1, 1)], [direction]
        first, second = list(self._first), list(self._second)
        if second:
            spheres = _sphere_spheres_kernel(len(second)).map("sphere_spheres", "serial", len(first), [1, 3], [])
            d, direction = spheres(centers[:, first], centers[:, second], self._radius[None, first],
                                   self._radius[None, second])
            distances.append(ca.reshape(d, -1, 1))
            directions.append(direction)
        return ca.Function("arm_clearance", [centers, poses], [ca.vertcat(*distances), ca.horzcat(*directions)],
                           ["centers", "static_poses"], ["distance", "direction"])


def _sphere_shapes_kernel(shapes: list[tuple[int, np.ndarray]]) -> ca.Function:
    """One sphere (world centre c, radius r) against every static shape (kind and size as ``_shape`` gives
    them; poses [vec(R); p], one column each): the signed distances (1 x S, m; plus the per-shape offset
    ``out_of_play``) and their gradients over c (3 x S)."""
    c, r, out_of_play = ca.SX.sym("c", 3), ca.SX.sym("r"), ca.SX.sym("out_of_play", len(shapes))
    poses = ca.SX.sym("poses", 12, len(shapes))
    distances, gradients = [], []
    for j, (kind, size) in enumerate(shapes):
        distance = _signed_distance(kind, size, ca.reshape(poses[:9, j], 3, 3).T @ (c - poses[9:, j])) - r
        distances.append(distance + out_of_play[j])
        gradients.append(ca.gradient(distance, c))
    return ca.Function("sphere_shapes", [c, poses, r, out_of_play], [ca.horzcat(*distances), ca.horzcat(*gradients)])


def _signed_distance(kind: int, size: np.ndarray, local: ca.SX) -> ca.SX:
    """Signed distance (m) of a point given in a shape's own frame: a box (half sizes), a cylinder along z
    (radius, half length) or a capsule along z (radius, half length of its segment)."""
    x, y, z = ca.vertsplit(local)
    if kind == _SDF_CAPSULE:
        beyond = ca.fmax(ca.fabs(z) - size[1], 0.0)
        return ca.sqrt(x * x + y * y + beyond * beyond + _TINY) - size[0]
    if kind == _SDF_CYLINDER:
        excess = [ca.sqrt(x * x + y * y + _TINY) - size[0], ca.fabs(z) - size[1]]
    else:
        excess = [ca.fabs(x) - size[0], ca.fabs(y) - size[1], ca.fabs(z) - size[2]]
    outside = ca.sqrt(sum(ca.fmax(e, 0.0) ** 2 for e in excess) + _TINY)
    deepest = excess[0]
    for e in excess[1:]:
        deepest = ca.fmax(deepest, e)
    return outside + ca.fmin(deepest, 0.0)


def _sphere_spheres_kernel(count: int) -> ca.Function:
    """One sphere (centre a, radius r_a) against ``count`` spheres (centres b, radii r_b): the distances
    (1 x count, m) and their gradients over a (3 x count)."""
    a, b = ca.SX.sym("a", 3), ca.SX.sym("b", 3, count)
    radius_a, radius_b = ca.SX.sym("radius_a"), ca.SX.sym("radius_b", 1, count)
    distances, units = [], []
    for k in range(count):
        length = ca.sqrt(ca.sumsqr(a - b[:, k]) + _TINY)
        distances.append(length - radius_a - radius_b[k])
        units.append((a - b[:, k]) / length)
    return ca.Function("sphere_spheres", [a, b, radius_a, radius_b], [ca.horzcat(*distances), ca.horzcat(*units)])


def _shape(mj_model: mujoco.MjModel, geom: int) -> tuple[int, np.ndarray, np.ndarray]:
    """(kind, size, centre in the geom frame) of the shape standing for a geom: boxes, cylinders, capsules
    and spheres as they are; any other geom (meshes, ellipsoids) as its bounding box, which contains it."""
    kinds = {mujoco.mjtGeom.mjGEOM_BOX: _SDF_BOX, mujoco.mjtGeom.mjGEOM_CYLINDER: _SDF_CYLINDER,
             mujoco.mjtGeom.mjGEOM_CAPSULE: _SDF_CAPSULE, mujoco.mjtGeom.mjGEOM_SPHERE: _SDF_CAPSULE}
    kind = kinds.get(int(mj_model.geom_type[geom]))
    if kind is None:
        return _SDF_BOX, mj_model.geom_aabb[geom][3:].copy(), mj_model.geom_aabb[geom][:3].copy()
    size = mj_model.geom_size[geom].copy()
    if mj_model.geom_type[geom] == mujoco.mjtGeom.mjGEOM_SPHERE:
        size[1] = 0.0  # a capsule of zero length
    return kind, size, np.zeros(3)


def _sphere_cover(kind: int, size: np.ndarray, spacing: float) -> tuple[np.ndarray, float]:
    """Centres (k, 3) in the shape frame and common radius (m) of spheres whose union contains the shape."""
    if kind == _SDF_CAPSULE:  # spheres along the axis, each through the rim of its slice
        count = max(1, int(np.ceil(2 * size[1] / spacing)) + 1)
        z = np.linspace(-size[1], size[1], count)
        cell = 2 * size[1] / max(count - 1, 1)
        return np.stack([np.zeros(count), np.zeros(count), z], axis=1), float(np.hypot(size[0], cell / 2))
    if kind == _SDF_CYLINDER:  # one row of cells along the axis, each sphere through its slice's rims
        count = int(np.ceil(2 * size[1] / spacing))
        cell = 2 * size[1] / count
        z = -size[1] + cell * (np.arange(count) + 0.5)
        return np.stack([np.zeros(count), np.zeros(count), z], axis=1), float(np.hypot(size[0], cell / 2))
    counts = np.maximum(np.ceil(2 * size / spacing).astype(int), 1)  # box: a grid of cells
    cells = 2 * size / counts
    axes = [-h + c * (np.arange(n) + 0.5) for h, c, n in zip(size, cells, counts, strict=True)]
    grid = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, 3)
    return grid, float(np.linalg.norm(cells / 2))
