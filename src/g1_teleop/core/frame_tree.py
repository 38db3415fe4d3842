"""The robot's frame tree: every link (body) and frame of its model, each with its parent link, and their
transforms from joint positions, by Pinocchio's forward kinematics. ROS-free.

What robot_state_publisher makes of a URDF: a URDF link's parent is the link its joint hangs from; a fixed
joint's transform never changes (published once, on /tf_static), a moving joint's follows the joint
positions (/tf, stamped with the joint state). For an MJCF the bodies take the links' place and its sites
and the configured frames (``config/g1_29dof.yaml`` ``frames``: the IMU, the eyes, the IK's hand points) hang
fixed from their bodies. Joints that are not among the robot's 29 nor its ``extra_joints`` (a model's hand joints)
stay at 0.

Names: ``parent_T_child`` is the 4×4 transform (m) of frame child in frame parent; ``q`` the 29 joint
positions (rad) in DDS order, then the ``extra_joints``' (0 in the standing pose); the root is the robot's base
link (the pelvis).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from g1_teleop.core.foot_contacts import FOOT_BODIES
from g1_teleop.core.pinocchio_model import PinJointMap
from g1_teleop.core.robot_description import Robot
from g1_teleop.core.rotations import matrix_from_wxyz

Transform = tuple[str, str, np.ndarray]  # (parent, child, parent_T_child)
_FRAME_KINDS = (pin.FrameType.BODY, pin.FrameType.OP_FRAME)


@dataclass(frozen=True)
class Edge:
    """One frame and the link it hangs from; ``fixed``: no joint moves it relative to that link."""

    parent: str
    child: str
    fixed: bool


class FrameTree:
    """The frames of a (fixed-base) Pinocchio model of the robot, rooted at its base link."""

    def __init__(self, robot: Robot, model: pin.Model, extra_joints: Sequence[str] = ()) -> None:
        self.root = robot.base_link
        self._model, self._data = model, model.createData()
        self._joints = PinJointMap.from_model(model, (*robot.joint_names, *extra_joints))
        self._q = pin.neutral(model)
        self._last: tuple[np.ndarray, dict[str, np.ndarray]] | None = None  # (q, its placements)
        ids: dict[str, int] = {}
        for i, frame in enumerate(model.frames):
            if frame.type in _FRAME_KINDS:
                ids.setdefault(frame.name, i)
        if self.root not in ids:
            raise ValueError(f"{robot.model_path}: no link {self.root!r} (the base link of {robot.config_path})")
        self._ids = ids
        edges = []
        for name, frame_id in ids.items():
            if name != self.root:
                parent, fixed = self._parent_link(frame_id)
                edges.append(Edge(parent, name, fixed))
        self.edges: tuple[Edge, ...] = tuple(edges)
        self.frames = frozenset(ids)
        self.standing_q = np.concatenate([robot.default_q, np.zeros(len(extra_joints))])
        """The default pose's q (the extra joints at 0)."""
        standing = self._placements(self.standing_q)
        self._standing_foot_z = robot.spawn_height + min(standing[f][2, 3] for f in FOOT_BODIES if f in ids)
        self._feet = tuple(f for f in FOOT_BODIES if f in ids)
        self.static: tuple[Transform, ...] = self._transforms(standing, fixed=True)
        """The fixed frames' transforms (they do not depend on q)."""

    def _parent_link(self, frame_id: int) -> tuple[str, bool]:
        """The first link (body) up the model's frame chain, and whether only fixed joints lie on the way."""
        frames, fixed = self._model.frames, True
        current = frames[frame_id].parentFrame
        while frames[current].type not in _FRAME_KINDS or frames[current].name not in self._ids:
            fixed &= frames[current].type != pin.FrameType.JOINT
            if current == 0:
                raise ValueError(f"frame {frames[frame_id].name!r} does not hang from the base link {self.root!r}")
            current = frames[current].parentFrame
        return frames[current].name, fixed

    def moving(self, q: np.ndarray) -> tuple[Transform, ...]:
        """The transforms of the frames that joints move, at the joint positions ``q`` (rad, module docstring)."""
        return self._transforms(self._placements(q), fixed=False)

    def root_T(self, q: np.ndarray, frame: str) -> np.ndarray:
        """4×4 transform of ``frame`` in the root link at ``q``."""
        return self._placements(q)[frame]

    def pelvis_height(self, q: np.ndarray, world_q_root: np.ndarray) -> float:
        """Height (m) of the root over the floor for a robot on its feet: the lower foot link at the height it
        has standing in the default pose at ``spawn_height``, with the root oriented ``world_q_root`` (w, x, y, z)
        (the real robot has no position measurement; the IMU gives the orientation)."""
        placements = self._placements(q)
        world_R_root = matrix_from_wxyz(world_q_root)
        return self._standing_foot_z - min(float(world_R_root[2] @ placements[f][:3, 3]) for f in self._feet)

    def _placements(self, q: np.ndarray) -> dict[str, np.ndarray]:
        """Every frame's transform in the root link (the last q's are kept: a tick asks several times)."""
        if self._last is not None and np.array_equal(self._last[0], q):
            return self._last[1]
        self._q[self._joints.idx_q] = q
        pin.framesForwardKinematics(self._model, self._data, self._q)
        root_inv = self._data.oMf[self._ids[self.root]].inverse()
        placements = {name: (root_inv * self._data.oMf[i]).homogeneous for name, i in self._ids.items()}
        self._last = (np.array(q, dtype=float), placements)
        return placements

    def _transforms(self, placements: dict[str, np.ndarray], fixed: bool) -> tuple[Transform, ...]:
        """parent_T_child of the (fixed or moving) edges: root_T_parent⁻¹ · root_T_child, rigid inverses in one
        batch (R_pᵀ R_c, R_pᵀ (t_c − t_p))."""
        edges = [e for e in self.edges if e.fixed == fixed]
        if not edges:
            return ()
        root_T_parent = np.stack([placements[e.parent] for e in edges])
        root_T_child = np.stack([placements[e.child] for e in edges])
        parent_R_root = root_T_parent[:, :3, :3].transpose(0, 2, 1)
        parent_T_child = np.zeros_like(root_T_child)
        parent_T_child[:, :3, :3] = parent_R_root @ root_T_child[:, :3, :3]
        root_p_parent_child = root_T_child[:, :3, 3] - root_T_parent[:, :3, 3]
        parent_T_child[:, :3, 3] = np.einsum("nij,nj->ni", parent_R_root, root_p_parent_child)
        parent_T_child[:, 3, 3] = 1.0
        return tuple((e.parent, e.child, T) for e, T in zip(edges, parent_T_child, strict=True))
