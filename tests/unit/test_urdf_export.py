"""robot_description of a MJCF model: the URDF written from the model that runs (core/urdf_export.py) loads
back (Pinocchio, urdfdom) as the same robot: every frame of the tree at the same place at random joint
positions (1e-7 m / rad: 9 significant digits), the same total mass, the robot's joint limits."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pinocchio as pin
import pytest

from g1_teleop.core.frame_tree import FrameTree
from g1_teleop.core.pinocchio_model import build_pinocchio_model
from g1_teleop.core.robot_description import Robot, load_robot
from g1_teleop.core.urdf_export import urdf_of
from support.shared_data import OFFICIAL_MODELS, shared_path


def round_trip(robot: Robot, tmp_path) -> None:
    model = build_pinocchio_model(robot)
    tree = FrameTree(robot, model)
    urdf = urdf_of(robot, tree, model)
    path = tmp_path / "written.urdf"
    path.write_text(urdf)
    again = load_robot(model=path)
    model_again = build_pinocchio_model(again)
    tree_again = FrameTree(again, model_again)
    assert tree_again.frames == tree.frames and tree_again.root == tree.root
    edges = {(e.parent, e.child, e.fixed) for e in tree.edges}
    assert {(e.parent, e.child, e.fixed) for e in tree_again.edges} == edges
    assert pin.computeTotalMass(model_again) == pytest.approx(pin.computeTotalMass(model), rel=1e-9)
    np.testing.assert_allclose(again.q_lower, robot.q_lower, atol=1e-9)
    np.testing.assert_allclose(again.effort_limit, robot.effort_limit, atol=1e-9)
    limits = {j.get("name"): j.find("limit") for j in ET.fromstring(urdf).iter("joint") if j.get("type") != "fixed"}
    assert [float(limits[n].get("velocity")) for n in robot.joint_names] == pytest.approx(robot.velocity_limit)
    rng = np.random.default_rng(7)
    for _ in range(50):
        q = rng.uniform(robot.q_lower, robot.q_upper)
        for frame in tree.frames:
            np.testing.assert_allclose(tree_again.root_T(q, frame), tree.root_T(q, frame), atol=1e-7, err_msg=frame)


@pytest.mark.parametrize("name", ["g1_29dof.xml", "scene_29dof.xml", "g1_body29_hand14.xml"])
def test_the_urdf_of_an_official_mjcf_is_the_same_robot(name: str, tmp_path) -> None:
    round_trip(load_robot(model=shared_path(OFFICIAL_MODELS / name)), tmp_path)


def test_the_urdf_of_our_urdf_is_the_same_robot(robot: Robot, tmp_path) -> None:
    round_trip(robot, tmp_path)
