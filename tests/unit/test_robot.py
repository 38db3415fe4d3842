"""Robot description: configuration validation, DDS joint order everywhere, MuJoCo and Pinocchio models."""

from __future__ import annotations

import copy
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import mujoco
import numpy as np
import pinocchio as pin
import pytest
import yaml

from g1_teleop.core.mujoco_model import IMU_SENSORS, IMU_SITE, MjJointMap, build_mujoco_model
from g1_teleop.core.paths import config_path
from g1_teleop.core.pinocchio_model import PinJointMap, build_pinocchio_model
from g1_teleop.core.robot_description import (
    ARM_INDICES,
    DEFAULT_KEYFRAME,
    FREE_JOINT_NAME,
    LEFT_ARM_INDICES,
    LEG_INDICES,
    RIGHT_ARM_INDICES,
    WAIST_INDICES,
    Robot,
    RobotConfigError,
    load_robot,
)

# DDS motor order of the 29-DoF G1 (LowCmd.motor_cmd index), written out independently of the config.
DDS_ORDER = tuple(
    f"{name}_joint"
    for name in (
        *(f"{side}_{j}" for side in ("left", "right")
          for j in ("hip_pitch", "hip_roll", "hip_yaw", "knee", "ankle_pitch", "ankle_roll")),
        "waist_yaw", "waist_roll", "waist_pitch",
        *(f"{side}_{j}" for side in ("left", "right")
          for j in ("shoulder_pitch", "shoulder_roll", "shoulder_yaw", "elbow", "wrist_roll", "wrist_pitch",
                    "wrist_yaw")),
    )
)
FOOT_SPHERE_RADIUS = 0.005


def _body_pairs_that_can_touch(model: mujoco.MjModel) -> set[frozenset[str]]:
    """Body pairs with a geom pair passing MuJoCo's contype/conaffinity and parent-child filters."""
    pairs = set()
    for a in range(model.ngeom):
        for b in range(a + 1, model.ngeom):
            ba, bb = model.geom_bodyid[a], model.geom_bodyid[b]
            parent_child = model.body_parentid[ba] == bb or model.body_parentid[bb] == ba
            if ba == bb or (parent_child and ba != 0 and bb != 0):
                continue
            contype, conaffinity = model.geom_contype, model.geom_conaffinity
            if (contype[a] & conaffinity[b]) or (contype[b] & conaffinity[a]):
                pairs.add(frozenset((model.body(ba).name, model.body(bb).name)))
    return pairs


def _foot_sphere_geoms(model: mujoco.MjModel) -> list[int]:
    return [
        g for g in range(model.ngeom)
        if model.body(model.geom_bodyid[g]).name.endswith("ankle_roll_link")
        and model.geom_type[g] == mujoco.mjtGeom.mjGEOM_SPHERE and model.geom_contype[g] != 0
    ]


# --------------------------------------------------------------------------------------------------
# Configuration


def test_config_joint_order_is_dds_order(robot: Robot) -> None:
    assert robot.joint_names == DDS_ORDER


def test_index_groups_select_the_named_joints(robot: Robot) -> None:
    names = np.array(robot.joint_names)
    assert all(("hip" in n or "knee" in n or "ankle" in n) for n in names[LEG_INDICES])
    assert all(n.startswith("waist_") for n in names[WAIST_INDICES])
    assert all(n.startswith("left_") and "hip" not in n for n in names[LEFT_ARM_INDICES])
    assert all(n.startswith("right_") and "hip" not in n for n in names[RIGHT_ARM_INDICES])
    assert list(ARM_INDICES) == [*LEFT_ARM_INDICES, *RIGHT_ARM_INDICES]
    assert len(LEG_INDICES) + len(WAIST_INDICES) + len(ARM_INDICES) == 29


def test_robot_arrays(robot: Robot) -> None:
    for array in (robot.q_lower, robot.q_upper, robot.effort_limit, robot.velocity_limit, robot.default_q,
                  robot.armature, robot.damping, robot.frictionloss):
        assert array.shape == (29,)
        assert not array.flags.writeable
    leg = [-0.1, 0.0, 0.0, 0.3, -0.2, 0.0]
    np.testing.assert_array_equal(robot.default_q, [*leg, *leg, 0, 0, 0, 0, 0.3, 0, 1.0, 0, 0, 0,
                                                    0, -0.3, 0, 1.0, 0, 0, 0])
    assert np.all(robot.q_lower < robot.default_q) and np.all(robot.default_q < robot.q_upper)
    np.testing.assert_array_equal(robot.effort_limit[[3, 9, 12, 13, 15, 20]], [139, 139, 88, 50, 25, 5])
    np.testing.assert_array_equal(robot.velocity_limit[[0, 3, 4, 19, 20, 28]], [32, 20, 37, 37, 22, 22])
    wrist_pitch_yaw = [20, 21, 27, 28]
    np.testing.assert_array_equal(robot.frictionloss[wrist_pitch_yaw], 0.1)
    assert np.all(np.delete(robot.frictionloss, wrist_pitch_yaw) == 0.2)


def test_gain_profiles(robot: Robot) -> None:
    kp, kd = robot.gains("default")
    np.testing.assert_array_equal(kp[:6], [100, 100, 100, 150, 40, 40])
    np.testing.assert_array_equal(kp[6:12], kp[:6])
    np.testing.assert_array_equal(kp[WAIST_INDICES], 300)
    np.testing.assert_array_equal(kd[WAIST_INDICES], 3)
    np.testing.assert_array_equal(kp[LEFT_ARM_INDICES], [100, 100, 50, 50, 20, 20, 20])
    np.testing.assert_array_equal(kd[RIGHT_ARM_INDICES], [2, 2, 2, 2, 1, 1, 1])
    kp, kd = robot.gains("damping")
    assert np.all(kp == 0) and np.all(kd == 8)
    with pytest.raises(KeyError, match="unknown gain profile 'stiff'"):
        robot.gains("stiff")


def _write_config(tmp_path: Path, edit) -> Path:
    raw = yaml.safe_load(config_path("g1_29dof.yaml").read_text())
    raw = copy.deepcopy(raw)
    edit(raw)
    path = tmp_path / "robot.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


def _set(path: tuple, value):
    def edit(raw):
        node = raw
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
    return edit


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda raw: raw["joints"].pop(), r"joints: expected a list of 29 joints in DDS order, got 28"),
        (_set(("joints", 6, "name"), "left_hip_pitch_joint"), r"joints\[6\]\.name: duplicate joint"),
        (_set(("joints", 3, "velocity_limit"), -1), r"joints\[3\]\.velocity_limit: must be > 0"),
        (_set(("joints", 3, "default_q"), "high"), r"joints\[3\]\.default_q: expected a finite number"),
        (_set(("joints", 3, "default_q"), -1.0), r"default_q outside the limits .*left_knee_joint"),
        (_set(("joints", 0, "name"), "left_hip_joint"),
         r"1 of the 29 G1 joints are missing from the model \(left_hip_joint\)"),
        (_set(("joints", 0, "stiffness"), 1), r"joints\[0\]: unknown key\(s\) stiffness"),
        (_set(("extra",), 1), r"unknown key\(s\) extra"),
        (lambda raw: raw.pop("spawn_height"), r"missing key\(s\) spawn_height"),
        (_set(("spawn_height",), 0), r"spawn_height: must be > 0"),
        (_set(("gain_profiles", "default", "kp"), [1, 2]),
         r"gain_profiles\.default\.kp: expected a list of 29"),
        (_set(("gain_profiles", "damping", "kd"), -8), r"gain_profiles\.damping\.kd: must be >= 0"),
        (_set(("mujoco_joint_dynamics", "frictionloss", "bogus_joint"), 0.1),
         r"mujoco_joint_dynamics\.frictionloss: unknown joint\(s\) bogus_joint"),
        (_set(("mujoco_joint_dynamics", "armature"), {"left_knee_joint": 0.1}), r"needs a 'default' value"),
        (_set(("frames", "left_eye", "quat_wxyz"), [1, 0, 0, 0.1]),
         r"frames\.left_eye\.quat_wxyz: not a unit"),
        (_set(("frames", "left_ee", "position"), [0.05, 0]),
         r"frames\.left_ee\.position: expected a list of 3"),
        (lambda raw: raw["frames"].pop("imu"), r"frames: missing key\(s\) imu"),
        (_set(("frames", "left_ee", "parent"), "left_palm_link"),
         r"left_palm_link \(frames\.left_ee\.parent\)"),
        (_set(("self_collision", "pairs"), [["trunk", "head"]]),
         r"self_collision\.pairs\[0\]: expected two group"),
        (_set(("self_collision", "groups", "trunk"), ["pelvis", "left_knee_link"]), r"already in group"),
        (_set(("model",), "missing.urdf"), r"missing\.urdf: model file not found"),
    ],
)
def test_config_errors_name_the_key(tmp_path: Path, edit, message: str) -> None:
    path = _write_config(tmp_path, edit)
    with pytest.raises(RobotConfigError, match=message) as info:
        load_robot(path)
    assert str(info.value).startswith(f"{path}: ")


def test_unreadable_config(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("joints: [unclosed")
    with pytest.raises(RobotConfigError, match="cannot read"):
        load_robot(path)


def test_a_key_given_twice_is_refused_not_overridden(tmp_path: Path) -> None:
    """PyYAML alone keeps the last of two equal keys: a second kp line would set the gains without a word."""
    lines = config_path("g1_29dof.yaml").read_text().splitlines()
    kp = next(i for i, line in enumerate(lines) if line.strip().startswith("kp:"))
    kd = next(i for i in range(kp + 1, len(lines)) if lines[i].strip().startswith("kd:"))
    path = tmp_path / "robot.yaml"
    path.write_text("\n".join([*lines[:kd], lines[kp].split("#")[0].split("[")[0] + "900", *lines[kd:]]) + "\n")
    assert yaml.safe_load(path.read_text())["gain_profiles"]["default"]["kp"] == 900  # what PyYAML would do
    with pytest.raises(RobotConfigError, match=rf"found the key 'kp' a second time \(first on line {kp + 1}\)"):
        load_robot(path)


# --------------------------------------------------------------------------------------------------
# URDF


def test_urdf_declares_dds_joints_with_config_limits(robot: Robot) -> None:
    root = ET.parse(robot.model_path).getroot()
    revolute = [j for j in root.findall("joint") if j.get("type") == "revolute"]
    assert tuple(j.get("name") for j in revolute) == DDS_ORDER
    assert all(j.get("type") == "fixed" for j in root.findall("joint") if j not in revolute)
    limits = [j.find("limit") for j in revolute]
    np.testing.assert_array_equal([float(x.get("velocity")) for x in limits], robot.velocity_limit)
    np.testing.assert_array_equal([float(x.get("effort")) for x in limits], robot.effort_limit)
    np.testing.assert_array_equal([float(x.get("lower")) for x in limits], robot.q_lower)
    # only standard URDF geometry (other URDF readers reject e.g. <capsule>), no meshes
    shapes = {g.tag for geometry in root.iter("geometry") for g in geometry}
    assert shapes == {"box", "cylinder", "sphere"}


# --------------------------------------------------------------------------------------------------
# MuJoCo


def test_mujoco_build_is_fast(robot: Robot) -> None:
    start = time.perf_counter()
    build_mujoco_model(robot)
    assert time.perf_counter() - start < 0.5


def test_mujoco_qpos_qvel_ctrl_follow_dds_order(robot: Robot, mj_model: mujoco.MjModel) -> None:
    m = mj_model
    assert m.jnt_type[0] == mujoco.mjtJoint.mjJNT_FREE and m.joint(0).name == FREE_JOINT_NAME
    assert tuple(m.joint(j).name for j in range(1, m.njnt)) == DDS_ORDER
    joints = MjJointMap.from_model(m, robot.joint_names)
    np.testing.assert_array_equal(joints.qpos_adr, np.arange(7, 36))
    np.testing.assert_array_equal(joints.dof_adr, np.arange(6, 35))
    np.testing.assert_array_equal(joints.actuator_id, np.arange(29))
    assert m.nq == 36 and m.nv == 35 and m.nu == 29
    np.testing.assert_array_equal(m.actuator_trnid[:, 0], np.arange(1, 30))
    actuator_names = tuple(m.actuator(a).name for a in range(m.nu))
    assert actuator_names == tuple(n.removesuffix("_joint") for n in DDS_ORDER)
    np.testing.assert_array_equal(m.actuator_ctrlrange[:, 1], robot.effort_limit)
    np.testing.assert_array_equal(m.actuator_ctrlrange[:, 0], -robot.effort_limit)
    assert np.all(m.actuator_gainprm[:, 0] == 1) and np.all(m.actuator_biastype == mujoco.mjtBias.mjBIAS_NONE)
    np.testing.assert_array_equal(m.dof_armature[6:], robot.armature)
    np.testing.assert_array_equal(m.dof_damping[6:], robot.damping)
    np.testing.assert_array_equal(m.dof_frictionloss[6:], robot.frictionloss)
    np.testing.assert_allclose(m.jnt_range[1:], np.column_stack([robot.q_lower, robot.q_upper]))
    assert m.opt.timestep == 0.005


def test_mujoco_sensors_cameras_frames(robot: Robot, mj_model: mujoco.MjModel) -> None:
    m = mj_model
    site = m.site(IMU_SITE)
    assert m.body(site.bodyid[0]).name == robot.frames["imu"].name
    types = (mujoco.mjtSensor.mjSENS_FRAMEQUAT, mujoco.mjtSensor.mjSENS_GYRO,
             mujoco.mjtSensor.mjSENS_ACCELEROMETER)
    for name, sensor_type in zip(IMU_SENSORS, types, strict=True):
        sensor = m.sensor(name)
        assert sensor.type[0] == sensor_type and sensor.objid[0] == site.id
    for role, frame in robot.frames.items():
        body = m.body(frame.name)
        assert m.body(body.parentid[0]).name == frame.parent
        np.testing.assert_allclose(body.pos, frame.position, atol=1e-12)
        np.testing.assert_allclose(body.quat, frame.quat_wxyz, atol=1e-9)
        if role.endswith("_eye"):
            camera = m.camera(frame.name)
            assert camera.bodyid[0] == body.id and camera.fovy[0] == 60.0
            np.testing.assert_array_equal(camera.pos, 0)
    assert m.ncam == 2
    # the eyes look forward (+x of the torso) and down; image up has a +z component
    data = mujoco.MjData(m)
    mujoco.mj_forward(m, data)
    world_R_camera = data.cam_xmat[m.camera("left_eye").id].reshape(3, 3)
    look = -world_R_camera[:, 2]
    assert look[0] > 0.8 and look[2] < 0 and world_R_camera[2, 1] > 0


def test_spawn_height_puts_foot_spheres_on_the_floor(robot: Robot, mj_model: mujoco.MjModel) -> None:
    m = mj_model
    data = mujoco.MjData(m)
    mujoco.mj_resetDataKeyframe(m, data, m.key(DEFAULT_KEYFRAME).id)
    np.testing.assert_array_equal(data.qpos[7:], robot.default_q)
    assert data.qpos[2] == robot.spawn_height
    mujoco.mj_kinematics(m, data)
    spheres = _foot_sphere_geoms(m)
    assert len(spheres) == 8
    bottoms = data.geom_xpos[spheres, 2] - m.geom_size[spheres, 0]
    np.testing.assert_allclose(bottoms, 0.0, atol=1e-4)


def test_standing_pinned_for_one_second_rests_on_the_feet(robot: Robot, mj_model: mujoco.MjModel) -> None:
    """Pelvis held in x, y and attitude, free in z: the weight must rest on the eight foot spheres."""
    m = mj_model
    data = mujoco.MjData(m)
    mujoco.mj_resetDataKeyframe(m, data, m.key(DEFAULT_KEYFRAME).id)
    joints = MjJointMap.from_model(m, robot.joint_names)
    kp, kd = robot.gains("default")
    held_q, held_v = [0, 1, 3, 4, 5, 6], [0, 1, 3, 4, 5]
    pose = data.qpos[held_q].copy()
    for _ in range(round(1.0 / m.opt.timestep)):
        q, v = data.qpos[joints.qpos_adr], data.qvel[joints.dof_adr]
        data.ctrl[joints.actuator_id] = kp * (robot.default_q - q) - kd * v
        mujoco.mj_step(m, data)
        data.qpos[held_q] = pose
        data.qvel[held_v] = 0.0
    floor = m.geom("floor").id
    contacts = [data.contact[i] for i in range(data.ncon)]
    assert {c.geom1 for c in contacts} | {c.geom2 for c in contacts} == {floor, *_foot_sphere_geoms(m)}
    assert len(contacts) == 8
    normal = np.zeros(6)
    total = 0.0
    for i in range(data.ncon):
        mujoco.mj_contactForce(m, data, i, normal)
        total += normal[0]
    weight = m.body_mass.sum() * -m.opt.gravity[2]
    assert total == pytest.approx(weight, rel=0.02)
    assert 0.0 < robot.spawn_height - data.qpos[2] < 0.01  # contact compression and leg sag only


def test_collision_filters(mj_model: mujoco.MjModel) -> None:
    m = mj_model
    collision = m.geom_contype != 0
    assert np.all(m.geom_group[collision & (m.geom_type != mujoco.mjtGeom.mjGEOM_PLANE)] == 3)
    assert np.all(m.geom_conaffinity[~collision] == 0)
    pairs = _body_pairs_that_can_touch(m)
    robot_bodies = {m.body(b).name for b in np.unique(m.geom_bodyid[collision])} - {"world"}
    assert {frozenset(("world", b)) for b in robot_bodies} <= pairs  # every collision geom meets the floor
    self_pairs = {p for p in pairs if "world" not in p}
    for expected in (("left_wrist_yaw_link", "torso_link"), ("right_elbow_link", "pelvis"),
                     ("left_wrist_yaw_link", "right_wrist_yaw_link"), ("left_knee_link", "right_knee_link"),
                     ("right_wrist_yaw_link", "left_hip_yaw_link")):
        assert frozenset(expected) in self_pairs
    for excluded in (("left_shoulder_yaw_link", "torso_link"), ("left_hip_yaw_link", "pelvis"),
                     ("left_ankle_roll_link", "right_ankle_roll_link"),
                     ("left_elbow_link", "left_wrist_yaw_link")):
        assert frozenset(excluded) not in self_pairs
    assert not any(b.endswith("ankle_roll_link") for p in self_pairs for b in p)


def test_no_contacts_at_default_pose_in_the_air(robot: Robot, mj_model: mujoco.MjModel) -> None:
    data = mujoco.MjData(mj_model)
    mujoco.mj_resetDataKeyframe(mj_model, data, mj_model.key(DEFAULT_KEYFRAME).id)
    data.qpos[2] += 0.1
    mujoco.mj_forward(mj_model, data)
    assert data.ncon == 0


def test_hand_against_chest_is_a_contact(robot: Robot, mj_model: mujoco.MjModel) -> None:
    m = mj_model
    data = mujoco.MjData(m)
    mujoco.mj_resetDataKeyframe(m, data, m.key(DEFAULT_KEYFRAME).id)
    data.qpos[2] += 0.1
    joints = MjJointMap.from_model(m, robot.joint_names)
    # left arm folded across the chest: shoulder pitched forward, rolled inwards, elbow bent
    for name, value in (("left_shoulder_pitch_joint", -0.6), ("left_shoulder_roll_joint", -0.6),
                        ("left_elbow_joint", 1.8)):
        data.qpos[joints.qpos_adr[robot.joint_names.index(name)]] = value
    mujoco.mj_forward(m, data)
    touching = {frozenset((m.body(m.geom_bodyid[c.geom1]).name, m.body(m.geom_bodyid[c.geom2]).name))
                for c in data.contact[: data.ncon]}
    assert any("torso_link" in p and any(b.startswith("left_") for b in p) for p in touching)


def test_mj_joint_map_errors(robot: Robot, mj_model: mujoco.MjModel) -> None:
    with pytest.raises(KeyError, match="model lacks joints: left_thumb_joint, neck_joint"):
        MjJointMap.from_model(mj_model, [*robot.joint_names, "left_thumb_joint", "neck_joint"])
    unactuated = mujoco.MjSpec.from_file(str(robot.model_path)).compile()
    with pytest.raises(KeyError, match="no actuator drives joints: left_hip_pitch_joint"):
        MjJointMap.from_model(unactuated, robot.joint_names)


def test_mujoco_without_floor(robot: Robot) -> None:
    model = build_mujoco_model(robot, timestep=0.002, floor=False)
    assert model.opt.timestep == 0.002
    assert mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, "floor") == -1
    assert model.nlight == 0


# --------------------------------------------------------------------------------------------------
# Pinocchio


def test_pinocchio_fixed_base_follows_dds_order(robot: Robot) -> None:
    model = build_pinocchio_model(robot)
    assert tuple(model.names[1:]) == DDS_ORDER
    assert model.nq == model.nv == 29
    joints = PinJointMap.from_model(model, robot.joint_names)
    np.testing.assert_array_equal(joints.idx_q, np.arange(29))
    np.testing.assert_array_equal(joints.idx_v, np.arange(29))
    np.testing.assert_array_equal(model.lowerPositionLimit, robot.q_lower)
    np.testing.assert_array_equal(model.upperPositionLimit, robot.q_upper)
    np.testing.assert_array_equal(model.effortLimit, robot.effort_limit)
    np.testing.assert_array_equal(model.velocityLimit, robot.velocity_limit)


def test_pinocchio_floating_base(robot: Robot) -> None:
    model = build_pinocchio_model(robot, floating_base=True)
    assert model.names[1] == FREE_JOINT_NAME and model.nq == 36 and model.nv == 35
    joints = PinJointMap.from_model(model, robot.joint_names)
    np.testing.assert_array_equal(joints.idx_q, np.arange(7, 36))
    np.testing.assert_array_equal(joints.idx_v, np.arange(6, 35))


def test_pinocchio_frames_match_config(robot: Robot) -> None:
    model = build_pinocchio_model(robot)
    data = model.createData()
    q = pin.neutral(model)
    q[:] = robot.default_q
    pin.framesForwardKinematics(model, data, q)
    for frame in robot.frames.values():
        assert model.existFrame(frame.name)
        world_T_parent = data.oMf[model.getFrameId(frame.parent, pin.FrameType.BODY)]
        world_T_frame = data.oMf[model.getFrameId(frame.name)]
        parent_T_frame = world_T_parent.inverse() * world_T_frame
        np.testing.assert_allclose(parent_T_frame.homogeneous, frame.parent_T_frame, atol=1e-9)


def test_pinocchio_adds_missing_frames(robot: Robot, tmp_path: Path) -> None:
    """A user URDF without our fixed links gets the configured frames programmatically."""
    root = ET.parse(robot.model_path).getroot()
    frame_names = {f.name for f in robot.frames.values()}
    for element in list(root):
        if element.get("name", "").removesuffix("_joint") in frame_names:  # fixed link or its joint
            root.remove(element)
    bare = tmp_path / "bare.urdf"
    ET.ElementTree(root).write(bare)
    model = build_pinocchio_model(load_robot(model=bare))
    reference = build_pinocchio_model(robot)
    q = np.random.default_rng(3).uniform(robot.q_lower, robot.q_upper)
    data, reference_data = model.createData(), reference.createData()
    pin.framesForwardKinematics(model, data, q)
    pin.framesForwardKinematics(reference, reference_data, q)
    for name in frame_names:
        assert model.frames[model.getFrameId(name)].type == pin.FrameType.OP_FRAME
        np.testing.assert_allclose(data.oMf[model.getFrameId(name)].homogeneous,
                                   reference_data.oMf[reference.getFrameId(name)].homogeneous, atol=1e-9)
    # the same in MuJoCo: missing frames become bodies, cameras and the IMU site still exist
    mj = build_mujoco_model(load_robot(model=bare))
    assert mj.ncam == 2 and mj.site(IMU_SITE).bodyid[0] == mj.body("imu_in_pelvis").id


def test_pin_joint_map_errors(robot: Robot) -> None:
    model = build_pinocchio_model(robot, floating_base=True)
    with pytest.raises(KeyError, match="model lacks joints: head_joint"):
        PinJointMap.from_model(model, [*robot.joint_names, "head_joint"])
    with pytest.raises(KeyError, match="not one-degree-of-freedom joints: floating_base_joint"):
        PinJointMap.from_model(model, [FREE_JOINT_NAME])


def test_joint_groups_by_name(robot) -> None:
    names = robot.joint_names
    assert [names[i] for i in robot.group("legs")] == [n for n in names if "hip" in n or "knee" in n or "ankle" in n]
    assert [names[i] for i in robot.group("waist")] == [n for n in names if n.startswith("waist")]
    assert [names[i] for i in robot.group("arms")] == [n for n in names if "shoulder" in n or "elbow" in n
                                                       or "wrist" in n]
    assert robot.group_names("ankle_pitch") == ("left_ankle_pitch_joint", "right_ankle_pitch_joint")
    assert list(robot.group("lower_body")) == list(robot.group("legs")) + list(robot.group("waist"))
    with pytest.raises(KeyError, match="unknown joint group 'hands'"):
        robot.group("hands")


@pytest.mark.parametrize(
    ("groups", "message"),
    [
        ({"legs": ["left_leg"], "left_leg": ["legs"]}, r"contains itself"),
        ({"legs": ["left_hip_pitch_joint", "left_hip_pitch_joint"]}, r"joint_groups\.legs: a joint appears twice"),
        ({"legs": ["left_foot"]}, r"joint_groups\.legs\[0\]: 'left_foot' is neither a joint nor a group"),
    ],
)
def test_joint_group_errors_name_the_key(tmp_path: Path, groups, message: str) -> None:
    path = _write_config(tmp_path, _set(("joint_groups",), groups))
    with pytest.raises(RobotConfigError, match=message):
        load_robot(path)
