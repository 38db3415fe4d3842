"""Fixtures shared by every test: the project's robot description and its MuJoCo model."""

from __future__ import annotations

import os
import sys

import mujoco
import pytest

from g1_teleop.core.mujoco_model import build_mujoco_model
from g1_teleop.core.robot_description import Robot, load_robot
from g1_teleop.launching.dds_discovery import discovery_environment
from support.shared_data import REQUIRE_ENV, SHARED

os.environ.update(discovery_environment(os.environ))  # the tests' own ROS nodes discover the graph's as its do


@pytest.fixture(scope="session")
def robot() -> Robot:
    """The project's G1 (config/g1_29dof.yaml, urdf/g1_29dof.urdf)."""
    return load_robot()


@pytest.fixture(scope="session")
def mj_model(robot: Robot) -> mujoco.MjModel:
    """Our G1 as MuJoCo builds it (5 ms step, floor). Tests that change it must build their own."""
    return build_mujoco_model(robot)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    """Where the reference data must be there (``G1_TELEOP_REQUIRE_SHARED=1``), a test that skipped for want of
    it (its reason names ../shared) fails instead: a skip must not stand in for a check that CI is meant to make."""
    outcome = yield
    report = outcome.get_result()
    if report.skipped and os.environ.get(REQUIRE_ENV) == "1":
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        if str(SHARED) in reason or "../shared" in reason:
            report.outcome = "failed"
            report.longrepr = f"needs ../shared ({REQUIRE_ENV}=1) but skipped: {reason}"


@pytest.fixture(autouse=True)
def normal_scheduling_after_each_test(request: pytest.FixtureRequest):
    """After each test, every thread of this test process that runs at a real-time policy is put back to normal
    scheduling, and the test is named on stderr. A library may raise the thread it runs in to SCHED_FIFO 99 (as
    root; SVT-AV1 does, core/realtime_priority.scheduling_kept), and threads and processes started from it inherit
    that: a full suite found this process's DDS and ZeroMQ threads at FIFO 99, preempting the graphs under test."""
    yield
    for tid in os.listdir("/proc/self/task"):
        try:
            if os.sched_getscheduler(int(tid)) in (os.SCHED_FIFO, os.SCHED_RR):
                os.sched_setscheduler(int(tid), os.SCHED_OTHER, os.sched_param(0))
                print(f"\n{request.node.nodeid} left thread {tid} at a real-time policy: normal scheduling again",
                      file=sys.stderr)
        except (ProcessLookupError, PermissionError, OSError):
            continue  # (a thread that ended meanwhile)
