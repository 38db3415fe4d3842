"""The frame tree (core.frame_tree) against the URDF's own structure and MuJoCo's forward kinematics.

Every frame reached through the tree's parent→child transforms (the fixed ones and those of the joint
positions) must sit where MuJoCo puts the same body or site relative to the pelvis, at 1e-9, for random
joint positions: our URDF and, where ../shared has it, Unitree's MJCF with hands (whose 14 hand joints the
tree holds at 0).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

import mujoco
import numpy as np
import pytest

from g1_teleop.core.foot_contacts import FOOT_BODIES
from g1_teleop.core.frame_tree import FrameTree
from g1_teleop.core.mujoco_model import MjJointMap, build_mujoco_model
from g1_teleop.core.pinocchio_model import build_pinocchio_model
from g1_teleop.core.robot_description import FREE_JOINT_NAME, Robot, load_robot
from g1_teleop.core.rotations import matrix_from_wxyz, transform, wxyz_from_rpy
from support.shared_data import OFFICIAL_MODELS, shared_path

TOLERANCE = 1e-9  # m, and rotation matrix entries
CONFIGURATIONS = 30


def _tree_poses(tree: FrameTree, q: np.ndarray) -> dict[str, np.ndarray]:
    """Every frame in the root, composed from the tree's transforms only."""
    parent_T = {child: (parent, T) for parent, child, T in (*tree.static, *tree.moving(q))}
    poses = {tree.root: np.eye(4)}

    def pose(frame: str) -> np.ndarray:
        if frame not in poses:
            parent, T = parent_T[frame]
            poses[frame] = pose(parent) @ T
        return poses[frame]

    for frame in parent_T:
        pose(frame)
    return poses


def _mujoco_poses(model: mujoco.MjModel, robot: Robot, q: np.ndarray) -> dict[str, np.ndarray]:
    """Every body and site of MuJoCo's model in the pelvis frame, at joint positions q (base anywhere)."""
    data = mujoco.MjData(model)
    data.qpos[MjJointMap.from_model(model, robot.joint_names).qpos_adr] = q
    base = model.joint(FREE_JOINT_NAME).qposadr[0]
    data.qpos[base:base + 7] = [0.3, -0.2, 0.9, *wxyz_from_rpy(0.1, -0.2, 0.7)]
    mujoco.mj_kinematics(model, data)
    world = {model.body(i).name: transform(data.xpos[i], data.xquat[i]) for i in range(1, model.nbody)}
    for i in range(model.nsite):
        T = np.eye(4)
        T[:3, :3], T[:3, 3] = data.site_xmat[i].reshape(3, 3), data.site_xpos[i]
        world.setdefault(model.site(i).name, T)
    pelvis_inv = np.linalg.inv(world[robot.base_link])
    return {name: pelvis_inv @ T for name, T in world.items()}


def _check_against_mujoco(robot: Robot, expected_frames: int) -> None:
    tree = FrameTree(robot, build_pinocchio_model(robot))
    model = build_mujoco_model(robot)
    rng = np.random.default_rng(7)
    compared = set()
    for _ in range(CONFIGURATIONS):
        q = rng.uniform(robot.q_lower, robot.q_upper)
        ours, theirs = _tree_poses(tree, q), _mujoco_poses(model, robot, q)
        assert set(ours) == tree.frames
        for name in set(ours) & set(theirs):
            np.testing.assert_allclose(ours[name], theirs[name], atol=TOLERANCE, err_msg=name)
            compared.add(name)
    assert len(compared) >= expected_frames, f"only {sorted(compared)} are both in the tree and in MuJoCo"
    assert {"imu_in_pelvis", "left_eye", "right_eye", "left_ee", "right_ee"} <= tree.frames


def test_urdf_frames_match_mujoco(robot: Robot) -> None:
    _check_against_mujoco(robot, expected_frames=35)  # every link of urdf/g1_29dof.urdf


def test_mjcf_with_hands_frames_match_mujoco() -> None:
    robot = load_robot(model=shared_path(OFFICIAL_MODELS / "g1_body29_hand14.xml"))
    _check_against_mujoco(robot, expected_frames=45)  # bodies (hands at 0: MuJoCo's qpos0 too) and sites


def test_parents_and_fixed_joints_as_the_urdf_names_them(robot: Robot) -> None:
    """What robot_state_publisher would publish: one edge per URDF joint, parent link → child link, the
    fixed joints static."""
    root = ET.parse(robot.model_path).getroot()
    urdf = {(j.find("parent").get("link"), j.find("child").get("link"), j.get("type") == "fixed")
            for j in root.iter("joint")}
    tree = FrameTree(robot, build_pinocchio_model(robot))
    assert {(e.parent, e.child, e.fixed) for e in tree.edges} == urdf
    assert tree.root == "pelvis"
    assert {child for _, child, _ in tree.static} == {"imu_in_pelvis", "left_eye", "right_eye", "left_ee", "right_ee"}
    assert len(tree.moving(robot.default_q)) == 29


def test_pelvis_height_puts_the_lower_foot_where_it_stands(robot: Robot) -> None:
    tree = FrameTree(robot, build_pinocchio_model(robot))
    assert tree.pelvis_height(robot.default_q, np.array([1.0, 0.0, 0.0, 0.0])) == pytest.approx(robot.spawn_height,
                                                                                               abs=1e-12)
    standing_foot_z = robot.spawn_height + min(tree.root_T(robot.default_q, f)[2, 3] for f in FOOT_BODIES)
    q = robot.default_q.copy()
    q[robot.group("legs")] = (-0.6, 0.1, 0.0, 1.2, -0.6, 0.0) * 2  # a squat
    world_q_pelvis = wxyz_from_rpy(0.08, 0.15, 1.0)
    height = tree.pelvis_height(q, world_q_pelvis)
    feet_z = [matrix_from_wxyz(world_q_pelvis)[2] @ tree.root_T(q, f)[:3, 3] + height for f in FOOT_BODIES]
    assert min(feet_z) == pytest.approx(standing_foot_z, abs=1e-12)
    assert height < robot.spawn_height - 0.02  # the squat lowers the pelvis
