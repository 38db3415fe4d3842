"""Our G1 description against Unitree's official model (../shared/models/unitree_g1/g1_29dof.xml).

Kinematics at 200 seeded random configurations within the joint limits and random base poses: every
official body's world position (1e-6 m) and orientation (1e-6 rad), in MuJoCo and in Pinocchio; masses,
inertias, joint axes and limits; the foot contact spheres.
"""

from __future__ import annotations

import re
from pathlib import Path

import mujoco
import numpy as np
import pinocchio as pin
import pytest

from g1_teleop.core.mujoco_model import MjJointMap, build_mujoco_model
from g1_teleop.core.pinocchio_model import PinJointMap, build_pinocchio_model
from g1_teleop.core.robot_description import FREE_JOINT_NAME, Robot, load_robot

OFFICIAL_DIR = Path(__file__).resolve().parents[2].parent / "shared" / "models" / "unitree_g1"
OFFICIAL_MJCF = OFFICIAL_DIR / "g1_29dof.xml"
NUM_CONFIGURATIONS = 200
SEED = 29
POSITION_TOL = 1e-6  # m
ANGLE_TOL = 1e-6  # rad

Poses = list[dict[str, tuple[np.ndarray, np.ndarray]]]  # per configuration: body -> (position, rotation)


@pytest.fixture(scope="module")
def official_path() -> Path:
    if not OFFICIAL_MJCF.is_file():
        pytest.skip(f"official G1 model not found at ../shared/models/unitree_g1: {OFFICIAL_MJCF} is absent")
    return OFFICIAL_MJCF


@pytest.fixture(scope="module")
def official(official_path: Path) -> mujoco.MjModel:
    return mujoco.MjModel.from_xml_path(str(official_path))


@pytest.fixture(scope="module")
def configurations(robot: Robot) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """(base position (3,), base quaternion w, x, y, z (4,), joint positions (29,) in DDS order)."""
    rng = np.random.default_rng(SEED)
    result = []
    for _ in range(NUM_CONFIGURATIONS):
        quat = rng.normal(size=4)
        result.append((rng.uniform(-1.0, 1.0, 3), quat / np.linalg.norm(quat),
                       rng.uniform(robot.q_lower, robot.q_upper)))
    return result


def _official_poses(official: mujoco.MjModel, robot: Robot, configurations) -> Poses:
    """World (position, rotation matrix) of every official body, for each configuration."""
    data = mujoco.MjData(official)
    joints = MjJointMap.from_model(official, robot.joint_names)
    base = official.joint(FREE_JOINT_NAME).qposadr[0]
    poses = []
    for position, quat, q in configurations:
        data.qpos[base : base + 7] = [*position, *quat]
        data.qpos[joints.qpos_adr] = q
        mujoco.mj_kinematics(official, data)
        poses.append({official.body(b).name: (data.xpos[b].copy(), data.xmat[b].reshape(3, 3).copy())
                      for b in range(official.nbody)})
    return poses


@pytest.fixture(scope="module")
def official_poses(official: mujoco.MjModel, robot: Robot, configurations) -> Poses:
    return _official_poses(official, robot, configurations)


def _angle(world_R_a: np.ndarray, world_R_b: np.ndarray) -> float:
    """Rotation angle (rad) between two orientations, accurate near zero."""
    a_R_b = world_R_a.T @ world_R_b
    skew = a_R_b - a_R_b.T
    sin = 0.5 * np.linalg.norm([skew[2, 1], skew[0, 2], skew[1, 0]])
    cos = 0.5 * (np.trace(a_R_b) - 1.0)
    return float(np.arctan2(sin, cos))


def _worst_errors(reference: Poses, candidate: Poses) -> tuple[float, float]:
    """Largest position (m) and orientation (rad) differences over all configurations and bodies."""
    position = angle = 0.0
    for expected, actual in zip(reference, candidate, strict=True):
        assert set(expected) <= set(actual), f"bodies missing: {sorted(set(expected) - set(actual))}"
        for name, (p, rotation) in expected.items():
            position = max(position, float(np.linalg.norm(actual[name][0] - p)))
            angle = max(angle, _angle(rotation, actual[name][1]))
    return position, angle


def _pinocchio_poses(model: pin.Model, robot: Robot, configurations, names) -> Poses:
    data = model.createData()
    joints = PinJointMap.from_model(model, robot.joint_names)
    frame_ids = {name: model.getFrameId(name, pin.FrameType.BODY) for name in names if name != "world"}
    missing = [n for n, i in frame_ids.items() if i >= model.nframes]
    assert not missing, f"Pinocchio model lacks bodies {missing}"
    poses = []
    for position, quat, q in configurations:
        config = pin.neutral(model)
        config[:7] = [*position, *quat[1:], quat[0]]  # Pinocchio's free flyer: x, y, z, qx, qy, qz, qw
        config[joints.idx_q] = q
        pin.framesForwardKinematics(model, data, config)
        poses.append({name: (data.oMf[i].translation.copy(), data.oMf[i].rotation.copy())
                      for name, i in frame_ids.items()})
    return poses


def _without_world(poses: Poses) -> Poses:
    return [{n: v for n, v in pose.items() if n != "world"} for pose in poses]


def test_mujoco_kinematics_match_official(official, mj_model, robot, configurations, official_poses) -> None:
    assert official.nbody == 31
    position, angle = _worst_errors(official_poses, _official_poses(mj_model, robot, configurations))
    assert position <= POSITION_TOL
    assert angle <= ANGLE_TOL


def test_pinocchio_kinematics_match_official(official, robot, configurations, official_poses) -> None:
    model = build_pinocchio_model(robot, floating_base=True)
    names = [official.body(b).name for b in range(official.nbody)]
    position, angle = _worst_errors(_without_world(official_poses),
                                    _pinocchio_poses(model, robot, configurations, names))
    assert position <= POSITION_TOL
    assert angle <= ANGLE_TOL


def test_pinocchio_from_the_official_mjcf(
    official, official_path, robot, configurations, official_poses
) -> None:
    """A user-given MJCF loads in Pinocchio with the same kinematics and gains our fixed frames."""
    official_robot = load_robot(model=official_path)
    model = build_pinocchio_model(official_robot, floating_base=True)
    names = [official.body(b).name for b in range(official.nbody)]
    position, angle = _worst_errors(_without_world(official_poses),
                                    _pinocchio_poses(model, official_robot, configurations, names))
    assert position <= POSITION_TOL and angle <= ANGLE_TOL

    ours = build_pinocchio_model(robot)
    theirs = build_pinocchio_model(official_robot)
    assert theirs.nq == 29 and tuple(theirs.names[1:]) == robot.joint_names
    ours_data, theirs_data = ours.createData(), theirs.createData()
    q = configurations[0][2]
    pin.framesForwardKinematics(ours, ours_data, q)
    pin.framesForwardKinematics(theirs, theirs_data, q)
    for frame in robot.frames.values():
        expected = ours_data.oMf[ours.getFrameId(frame.name)]
        actual = theirs_data.oMf[theirs.getFrameId(frame.name)]
        assert np.linalg.norm(actual.translation - expected.translation) <= POSITION_TOL
        assert _angle(expected.rotation, actual.rotation) <= ANGLE_TOL


def test_masses_and_inertias_match_official(official, mj_model, robot) -> None:
    total = official.body_mass.sum()
    assert mj_model.body_mass.sum() == pytest.approx(total, rel=1e-3)
    assert sum(i.mass for i in build_pinocchio_model(robot).inertias) == pytest.approx(total, rel=1e-3)

    def inertia(model: mujoco.MjModel, body: int) -> np.ndarray:
        body_R_inertia = np.zeros(9)
        mujoco.mju_quat2Mat(body_R_inertia, model.body_iquat[body])
        body_R_inertia = body_R_inertia.reshape(3, 3)
        return body_R_inertia @ np.diag(model.body_inertia[body]) @ body_R_inertia.T

    for b in range(1, official.nbody):
        name = official.body(b).name
        mine = mj_model.body(name).id
        assert mj_model.body_mass[mine] == pytest.approx(official.body_mass[b], rel=1e-12), name
        np.testing.assert_allclose(mj_model.body_ipos[mine], official.body_ipos[b], atol=1e-12, err_msg=name)
        np.testing.assert_allclose(inertia(mj_model, mine), inertia(official, b), atol=1e-10, err_msg=name)


def test_joints_match_official(official, mj_model, robot) -> None:
    theirs = MjJointMap.from_model(official, robot.joint_names)
    mine = MjJointMap.from_model(mj_model, robot.joint_names)
    official_ids = official.dof_jntid[theirs.dof_adr]
    our_ids = mj_model.dof_jntid[mine.dof_adr]
    np.testing.assert_array_equal(mj_model.jnt_axis[our_ids], official.jnt_axis[official_ids])
    # the official MJCF rounds the wrist limits to 5 decimals (1.97222, 1.61443); ours are the exact figures
    np.testing.assert_allclose(mj_model.jnt_range[our_ids], official.jnt_range[official_ids], atol=5e-6)
    np.testing.assert_array_equal(mj_model.actuator_ctrlrange[mine.actuator_id],
                                  official.actuator_ctrlrange[theirs.actuator_id])
    np.testing.assert_array_equal(mj_model.jnt_actfrcrange[our_ids], official.jnt_actfrcrange[official_ids])
    for name in ("armature", "damping", "frictionloss"):
        np.testing.assert_array_equal(getattr(mj_model, f"dof_{name}")[mine.dof_adr],
                                      getattr(official, f"dof_{name}")[theirs.dof_adr], err_msg=name)


def test_foot_contact_spheres_match_official(official, mj_model) -> None:
    def spheres(model: mujoco.MjModel, body: str) -> list[tuple[float, ...]]:
        b = model.body(body).id
        return sorted(
            (*model.geom_pos[g].round(12), float(model.geom_size[g, 0]))
            for g in range(model.ngeom)
            if model.geom_bodyid[g] == b and model.geom_contype[g] != 0
        )

    for side in ("left", "right"):
        expected = spheres(official, f"{side}_ankle_roll_link")
        assert len(expected) == 4 and all(s[3] == 0.005 for s in expected)
        assert spheres(mj_model, f"{side}_ankle_roll_link") == expected  # the only colliding geoms of the feet
        foot = mj_model.body(f"{side}_ankle_roll_link").id
        assert all(mj_model.geom_type[g] == mujoco.mjtGeom.mjGEOM_SPHERE
                   for g in range(mj_model.ngeom) if mj_model.geom_bodyid[g] == foot and mj_model.geom_contype[g] != 0)


def test_build_mujoco_model_from_the_official_mjcf(official_path, robot) -> None:
    """A user-given MJCF is used as it is, plus a floor; the DDS mapping still holds."""
    official_robot = load_robot(model=official_path)
    np.testing.assert_allclose(official_robot.q_upper, robot.q_upper, atol=5e-6)
    np.testing.assert_array_equal(official_robot.effort_limit, robot.effort_limit)
    model = build_mujoco_model(official_robot)
    assert model.geom("floor").type[0] == mujoco.mjtGeom.mjGEOM_PLANE
    joints = MjJointMap.from_model(model, robot.joint_names)
    np.testing.assert_array_equal(joints.qpos_adr, np.arange(7, 36))
    np.testing.assert_array_equal(joints.actuator_id, np.arange(29))
    for name in ("imu_quat", "imu_gyro", "imu_acc"):
        assert model.sensor(name).objid[0] == model.site("imu").id


def test_mjcf_in_degrees_without_free_joint(official_path, robot, tmp_path) -> None:
    """MJCF's default angle unit is the degree; a MJCF without a free joint gets one on request."""
    text = official_path.read_text().replace('angle="radian" ', "")
    text = re.sub(r'range="(\S+) (\S+)"',
                  lambda m: f'range="{np.degrees(float(m[1])):.9g} {np.degrees(float(m[2])):.9g}"', text)
    text = re.sub(r"<joint name=\"floating_base_joint\"[^>]*/>", "", text)
    variant = tmp_path / "g1_degrees.xml"
    variant.write_text(text)
    (tmp_path / "meshes").symlink_to(official_path.parent / "meshes")  # MuJoCo opens them to load the file
    degrees_robot = load_robot(model=variant)
    np.testing.assert_allclose(degrees_robot.q_lower, robot.q_lower, atol=5e-6)
    np.testing.assert_allclose(degrees_robot.q_upper, robot.q_upper, atol=5e-6)
    fixed = build_pinocchio_model(degrees_robot)
    floating = build_pinocchio_model(degrees_robot, floating_base=True)
    assert fixed.nq == 29 and tuple(fixed.names[1:]) == robot.joint_names
    assert floating.nq == 36 and floating.names[1] == FREE_JOINT_NAME
