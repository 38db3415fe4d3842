"""Robot model files as users bring them (Unitree's official G1 files in ../shared/models/unitree_g1): each
loads in MuJoCo and in Pinocchio with the same bodies, masses and kinematics, or is refused naming the file."""

from __future__ import annotations

from pathlib import Path

import mujoco
import numpy as np
import pinocchio as pin
import pytest

from g1_teleop.core.model_files import ModelFileError, mjspec_from_file
from g1_teleop.core.mujoco_model import MjJointMap, build_mujoco_model
from g1_teleop.core.pinocchio_model import PinJointMap, build_pinocchio_model
from g1_teleop.core.robot_description import RobotConfigError, load_robot
from support.shared_data import OFFICIAL_MODELS, shared_path

# (file, number of joints besides the 29 of the body: the Dex3 hands' 14)
USER_MODELS = [("scene_29dof.xml", 0), ("g1_29dof_camera.xml", 0), ("g1_body29_hand14.xml", 14),
               ("g1_body29_hand14.urdf", 14)]


@pytest.mark.parametrize(("name", "extra_joints"), USER_MODELS)
def test_official_models_load_alike_in_mujoco_and_pinocchio(name: str, extra_joints: int) -> None:
    robot = load_robot(model=shared_path(OFFICIAL_MODELS / name))
    mj = build_mujoco_model(robot)
    pin_model = build_pinocchio_model(robot, floating_base=True)
    # one free joint (7 values) and the hinge joints, each model the same number: the hands as extra joints
    assert pin_model.nq == mj.nq == 7 + 29 + extra_joints
    assert sum(inertia.mass for inertia in pin_model.inertias) == pytest.approx(float(mj.body_mass.sum()), rel=1e-9)
    assert 30 < float(mj.body_mass.sum()) < 40  # one G1 (Pinocchio's own MJCF parser counted some twice)

    # the same configuration, the same link poses (free joint at the origin)
    rng = np.random.default_rng(3)
    q29 = rng.uniform(robot.q_lower, robot.q_upper)
    data = mujoco.MjData(mj)
    data.qpos[:] = mj.qpos0
    data.qpos[:7] = [0, 0, 0, 1, 0, 0, 0]
    data.qpos[MjJointMap.from_model(mj, robot.joint_names).qpos_adr] = q29
    mujoco.mj_kinematics(mj, data)
    q = pin.neutral(pin_model)
    q[PinJointMap.from_model(pin_model, robot.joint_names).idx_q] = q29
    pin_data = pin_model.createData()
    pin.framesForwardKinematics(pin_model, pin_data, q)
    for link in ("left_wrist_yaw_link", "right_ankle_roll_link", "torso_link"):
        frame = pin_data.oMf[pin_model.getFrameId(link, pin.FrameType.BODY)]
        np.testing.assert_allclose(frame.translation, data.body(link).xpos, atol=1e-9, err_msg=link)
        np.testing.assert_allclose(frame.rotation, data.body(link).xmat.reshape(3, 3), atol=1e-9, err_msg=link)


def test_a_scene_that_includes_the_robot_is_the_robot() -> None:
    scene = load_robot(model=shared_path(OFFICIAL_MODELS / "scene_29dof.xml"))
    robot = load_robot(model=OFFICIAL_MODELS / "g1_29dof.xml")
    np.testing.assert_array_equal(scene.q_lower, robot.q_lower)
    np.testing.assert_array_equal(scene.effort_limit, robot.effort_limit)
    a, b = build_pinocchio_model(scene), build_pinocchio_model(robot)
    q = pin.randomConfiguration(b)
    assert pin.computeGeneralizedGravity(a, a.createData(), q) == pytest.approx(
        pin.computeGeneralizedGravity(b, b.createData(), q))


def test_a_urdf_finds_meshes_beside_it_or_under_package_paths(tmp_path: Path) -> None:
    (tmp_path / "pkg" / "meshes").mkdir(parents=True)
    _write_cube_obj(tmp_path / "pkg" / "meshes" / "link.obj")
    urdf = tmp_path / "pkg" / "urdf" / "robot.urdf"
    urdf.parent.mkdir()
    urdf.write_text(
        '<robot name="r"><link name="base"><visual><geometry><mesh filename="package://pkg/meshes/link.obj"/>'
        '</geometry></visual><collision><geometry><mesh filename="../meshes/link.obj"/></geometry></collision>'
        '<inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial>'
        '</link></robot>')
    assert mjspec_from_file(urdf).compile().nmesh >= 1
    urdf.write_text(urdf.read_text().replace("../meshes/link.obj", "../meshes/missing.obj"))
    with pytest.raises(ModelFileError, match=r"robot\.urdf: mesh files not found next to it: \.\./meshes/missing"):
        mjspec_from_file(urdf)


def test_a_model_of_another_robot_is_refused_with_the_reason(tmp_path: Path) -> None:
    other = tmp_path / "arm.xml"
    other.write_text('<mujoco><worldbody><body name="a"><joint name="j" type="hinge"/><geom size="0.1"/></body>'
                     '</worldbody></mujoco>')
    with pytest.raises(RobotConfigError, match=r"arm\.xml: 29 of the 29 G1 joints are missing .*29-DoF G1 model"):
        load_robot(model=other)
    broken = tmp_path / "broken.xml"
    broken.write_text("<mujoco><worldbody><body>")
    with pytest.raises(RobotConfigError, match=r"broken\.xml: MuJoCo cannot load it"):
        load_robot(model=broken)


def _write_cube_obj(path: Path) -> None:
    """A 10 cm cube as a Wavefront OBJ."""
    vertices = [f"v {x} {y} {z}" for x in (0, 0.1) for y in (0, 0.1) for z in (0, 0.1)]
    faces = ["f 1 2 4 3", "f 5 7 8 6", "f 1 5 6 2", "f 3 4 8 7", "f 1 3 7 5", "f 2 6 8 4"]
    path.write_text("\n".join(vertices + faces) + "\n")
