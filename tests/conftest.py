"""Fixtures shared by every test: the project's robot description and its MuJoCo model."""

from __future__ import annotations

import mujoco
import pytest

from g1_teleop.core.mujoco_model import build_mujoco_model
from g1_teleop.core.robot_description import Robot, load_robot


@pytest.fixture(scope="session")
def robot() -> Robot:
    """The project's G1 (config/g1_29dof.yaml, urdf/g1_29dof.urdf)."""
    return load_robot()


@pytest.fixture(scope="session")
def mj_model(robot: Robot) -> mujoco.MjModel:
    """Our G1 as MuJoCo builds it (5 ms step, floor). Tests that change it must build their own."""
    return build_mujoco_model(robot)
