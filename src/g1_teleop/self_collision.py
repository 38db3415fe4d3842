"""Clearance between the robot's parts that may touch each other (the arms and the trunk, the legs and
the other arm), from the collision geometry of the MuJoCo model. ROS-free.

The pairs of link groups come from the robot configuration (``self_collision`` in config/g1_29dof.yaml);
the geometry is the model's collision geoms. Distances are signed (negative: penetration), in metres.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np
import pinocchio as pin

from g1_teleop.robot import MjJointMap, Robot


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


@dataclass(frozen=True)
class ArmClearance:
    """Signed clearances (m) of the arm proxies and their gradients, at one arm configuration.

    distance_m (k,): per close pair (a moving geom and another geom), the smallest signed distance between
    the moving geom's covering spheres and the other geom. gradient (k, nv): d distance / d v of the
    Pinocchio model (columns of every joint; zero outside the arms). smallest_m: the smallest distance over
    every monitored pair (capped at the search range), also when no pair is close.
    """

    distance_m: np.ndarray
    gradient: np.ndarray
    smallest_m: float


_SDF_BOX, _SDF_CYLINDER, _SDF_CAPSULE = 0, 1, 2


class ArmCollisionModel:
    """Fast clearance between the arms and what they may touch, for the IK's collision constraints.

    The moving groups' collision geoms (forearms, wrists, hands; meshes by their bounding boxes) are
    covered by spheres whose union contains each geom (grid cells of at most ``sphere_spacing_m``, each
    sphere through its cell's corners), so a distance measured on the spheres never exceeds the distance of
    the real geoms: a configuration these proxies call clear is clear for the MuJoCo geometry. The other
    geoms (trunk boxes, head, thigh and shin cylinders) keep their exact shapes (signed distance functions
    of boxes, cylinders and capsules); they are placed once per configuration of the locked joints
    (``place_static``). Only the configured pairs
    (``self_collision`` in the robot config) that involve a moving group are monitored.

    Frames: everything in the Pinocchio model's world frame (the pelvis for the fixed-base model).
    """

    def __init__(self, robot: Robot, mj_model: mujoco.MjModel, pin_model, moving: tuple[str, str] = ("left_arm",
                 "right_arm"), sphere_spacing_m: float = 0.04, search_range_m: float = 0.2) -> None:
        sc = robot.self_collision
        unknown = [g for g in moving if g not in sc.groups]
        if unknown:
            raise ValueError(f"unknown self-collision groups {unknown}; configured: {sorted(sc.groups)}")
        if not sphere_spacing_m > 0 or not search_range_m > 0:
            raise ValueError("ArmCollisionModel: sphere_spacing_m and search_range_m must be positive")
        self.search_range_m = search_range_m
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
                        body_T_geom = pin.XYZQUATToSE3(np.r_[mj_model.geom_pos[g], mj_model.geom_quat[g][[1, 2, 3, 0]]])
                        geom_T_shape = pin.SE3(np.eye(3), _shape(mj_model, g)[2])
                        found.append((g, frame.parentJoint, frame.placement * body_T_geom * geom_T_shape))
            return found

        # Moving geoms: their covering spheres, flattened; each sphere rides on one joint.
        self._moving_groups = tuple(moving)
        offsets, radii, sphere_joint, sphere_group = [], [], [], []
        joints: list[int] = []
        for k, group in enumerate(moving):
            for g, joint, joint_T_geom in geoms(group):
                kind, size, _ = _shape(mj_model, g)
                centers, radius = _sphere_cover(kind, size, sphere_spacing_m)
                if joint not in joints:
                    joints.append(joint)
                offsets.append(centers @ joint_T_geom.rotation.T + joint_T_geom.translation)
                radii += [radius] * len(centers)
                sphere_joint += [joints.index(joint)] * len(centers)
                sphere_group += [k] * len(centers)
        self._joints = joints
        self._offsets = np.concatenate(offsets)  # (N, 3) sphere centres in their joint's frame
        self._radius = np.array(radii)  # (N,)
        self._sphere_joint = np.array(sphere_joint)  # (N,) index into self._joints
        sphere_group_arr = np.array(sphere_group)
        self._left = np.flatnonzero(sphere_group_arr == 0)
        self._right = np.flatnonzero(sphere_group_arr == 1)

        # Static geoms (locked during a solve) and which moving spheres may touch them.
        static_groups = sorted({b for _, b in pairs if b not in moving})
        self._static = [(group, *geom) for group in static_groups for geom in geoms(group)]
        self._static_shapes = _RoundedShapes([_shape(mj_model, g)[:2] for _, g, _, _ in self._static])
        allowed = np.array([[(group, sg) in pairs for sg, *_ in self._static] for group in moving])
        self._static_mask = allowed[sphere_group_arr]  # (N, S)
        self._arm_vs_arm = (moving[0], moving[1]) in pairs or (moving[1], moving[0]) in pairs
        self._static_R = np.zeros((len(self._static), 3, 3))
        self._static_p = np.zeros((len(self._static), 3))
        self._static_R_rows = np.zeros((3 * len(self._static), 3))
        self._static_R_p = np.zeros((3, len(self._static)))
        self._nv = pin_model.nv

    @property
    def sphere_count(self) -> int:
        return len(self._radius)

    def place_static(self, data) -> None:
        """Place the static geoms from ``data.oMi`` (forward kinematics done at the locked pose)."""
        for i, (_, _, joint, joint_T_geom) in enumerate(self._static):
            world_T_geom = data.oMi[joint] * joint_T_geom
            self._static_R[i] = world_T_geom.rotation
            self._static_p[i] = world_T_geom.translation
        self._static_R_rows = self._static_R.transpose(2, 0, 1).reshape(-1, 3)  # row (k, s): column k of R_s
        self._static_R_p = np.einsum("sjk,sj->ks", self._static_R, self._static_p)  # (3, S): Rᵀp

    def clearance(self, model, data, activation_m: float) -> ArmClearance:
        """Sphere/geom pairs closer than ``activation_m`` with their gradients, and the smallest distance,
        from ``data.oMi`` and the joint Jacobians (after ``pin.computeJointJacobians``)."""
        world_R = np.array([data.oMi[j].rotation for j in self._joints])
        world_o = np.array([data.oMi[j].translation for j in self._joints])
        centers = (world_R[self._sphere_joint] @ self._offsets[:, :, None])[:, :, 0] + world_o[self._sphere_joint]

        # Spheres against static geoms: (N, S) signed distances, normals (from the geom) in pelvis axes.
        # Rᵀ(c − p) of every sphere in every shape frame, (3, N, S), as one matrix product
        local = (self._static_R_rows @ centers.T).reshape(3, len(self._static), -1).transpose(0, 2, 1)
        local = local - self._static_R_p[:, None, :]
        sdf, local_normal = self._static_shapes.signed_distance(local)
        distance = np.where(self._static_mask, sdf - self._radius[:, None], np.inf)
        sphere, shape = np.nonzero(distance < activation_m)
        normal = (self._static_R[shape] @ local_normal[:, sphere, shape].T[:, :, None])[:, :, 0]
        row_distance = [distance[sphere, shape]]
        smallest = min(float(distance.min()), self.search_range_m)
        # gradient rows: n · d(centre)/dv for the moving sphere (and −n · d(centre)/dv for the other one)
        terms = [(sphere, normal)]
        if self._arm_vs_arm:
            between = centers[self._left][:, None, :] - centers[self._right][None]  # (L, R, 3)
            length = np.linalg.norm(between, axis=-1)
            gap = length - self._radius[self._left][:, None] - self._radius[self._right][None]
            smallest = min(smallest, float(gap.min()))
            a, b = np.nonzero(gap < activation_m)
            unit = between[a, b] / length[a, b, None]
            row_distance.append(gap[a, b])
            offset = len(sphere)
            terms += [(self._left[a], unit), (self._right[b], -unit)]
        distances = np.concatenate(row_distance)
        gradient = np.zeros((len(distances), self._nv))
        if len(distances):
            jacobians = np.array([pin.getJointJacobian(model, data, j, pin.LOCAL_WORLD_ALIGNED) for j in self._joints])
            for i, (spheres, normals) in enumerate(terms):
                rows = slice(0, len(spheres)) if i == 0 else slice(offset, len(distances))
                J = jacobians[self._sphere_joint[spheres]]  # (r, 6, nv)
                lever = centers[spheres] - world_o[self._sphere_joint[spheres]]
                # d(centre)/dv = Jv − [lever]× Jω, so n · d(centre)/dv = n · Jv + (lever × n) · Jω
                moment = lever[:, [1, 2, 0]] * normals[:, [2, 0, 1]] - lever[:, [2, 0, 1]] * normals[:, [1, 2, 0]]
                gradient[rows] += (normals[:, None, :] @ J[:, :3] + moment[:, None, :] @ J[:, 3:])[:, 0]
        return ArmClearance(distances, gradient, smallest)


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


class _RoundedShapes:
    """Static shapes as rounded boxes in their own frames, for signed distances in a (3, ...) layout
    (coordinates first, so that every operation works on whole planes).

    Box: half sizes (hx, hy, hz), no rounding. Cylinder (axis z): the xy plane taken radially, core radius r,
    half-length hz. Capsule / sphere: core radius 0, half-length hz, rounded by its radius.
    """

    def __init__(self, shapes: list[tuple[int, np.ndarray]]) -> None:
        kinds = np.array([kind for kind, _ in shapes])
        sizes = np.array([size for _, size in shapes])
        self.box = kinds == _SDF_BOX
        self.half_x = np.where(self.box, sizes[:, 0], np.where(kinds == _SDF_CYLINDER, sizes[:, 0], 0.0))
        self.half_y = np.where(self.box, sizes[:, 1], -1e9)  # round shapes: the second folded axis never counts
        self.half_z = np.where(self.box, sizes[:, 2], sizes[:, 1])
        self.rounding = np.where(kinds == _SDF_CAPSULE, sizes[:, 0], 0.0)

    def signed_distance(self, local: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Signed distances (N, S) of points local (3, N, S), each in the frame of its shape s, and the unit
        gradients (3, N, S) in the shape frames."""
        x, y, z = local
        radial = np.sqrt(x * x + y * y)
        abs_x, abs_y, abs_z = np.abs(local)
        excess_x = np.where(self.box, abs_x, radial) - self.half_x
        excess_y = np.where(self.box, abs_y - self.half_y, -1e9)
        excess_z = abs_z - self.half_z
        out_x, out_y, out_z = np.maximum(excess_x, 0.0), np.maximum(excess_y, 0.0), np.maximum(excess_z, 0.0)
        outside = np.sqrt(out_x * out_x + out_y * out_y + out_z * out_z)
        deepest = np.maximum(np.maximum(excess_x, excess_y), excess_z)
        is_out = outside > 0.0
        scale = 1.0 / np.where(is_out, outside, 1.0)
        # gradient of the folded point: along the excess outside, else the axis of the nearest face
        fold_x = np.where(is_out, out_x * scale, excess_x == deepest)
        fold_y = np.where(is_out, out_y * scale, (excess_y == deepest) & (excess_x != deepest))
        fold_z = np.where(is_out, out_z * scale, (excess_z == deepest) & (excess_x != deepest) & (excess_y != deepest))
        # unfold: the signs of the coordinates; round cross-sections along the radial direction
        radial_scale = fold_x / np.maximum(radial, 1e-12)
        normal = np.stack([np.where(self.box, np.copysign(fold_x, x), radial_scale * x),
                           np.where(self.box, np.copysign(fold_y, y), radial_scale * y),
                           np.copysign(fold_z, z)])
        return outside + np.minimum(deepest, 0.0) - self.rounding, normal
