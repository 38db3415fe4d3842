"""Fixtures for tests that start real nodes as separate processes over DDS.

Every test gets its own ROS_DOMAIN_ID (and discovery stays on this machine), so tests and parallel
runs never hear each other.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

_domains = itertools.count(0)


@pytest.fixture
def ros_domain(monkeypatch) -> int:
    """A ROS_DOMAIN_ID private to this test (101–200, spread by process id), set in os.environ."""
    domain = 101 + (os.getpid() * 7 + next(_domains)) % 100
    monkeypatch.setenv("ROS_DOMAIN_ID", str(domain))
    monkeypatch.setenv("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    return domain


@pytest.fixture
def rclpy_context(ros_domain):
    """An rclpy context on the test's domain, shut down afterwards."""
    import rclpy

    context = rclpy.Context()
    rclpy.init(context=context, domain_id=ros_domain)
    yield context
    context.try_shutdown()


@dataclass(frozen=True)
class SimRun:
    """A finished `g1-teleop sim` run: its run directory, printed output and summary."""

    out: Path
    stdout: str
    summary: dict

    def recording(self):
        from g1_teleop.tools.run_recording import Recording

        return Recording.load(self.out / "recording.npz")


@pytest.fixture
def sim_job(ros_domain, tmp_path) -> Callable[..., SimRun]:
    """Runs the main job (`g1-teleop sim ARGS --out <tmp>/<name>`, with --no-report unless ARGS say --report) as a
    separate process on the test's domain; a failed run fails the test with its output."""

    def run(*args: str, timeout_s: float = 600.0, name: str = "run") -> SimRun:
        out = tmp_path / name
        # report.html costs seconds of plotting a run: only the tests that want it ask for it (--report)
        report = () if "--report" in args else ("--no-report",)
        proc = subprocess.run([sys.executable, "-m", "g1_teleop.tools.cli", "sim", *args, *report, "--out", str(out)],
                              capture_output=True, text=True, timeout=timeout_s)
        assert proc.returncode == 0, f"g1-teleop sim failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        return SimRun(out, proc.stdout, json.loads((out / "summary.json").read_text()))

    return run


@pytest.fixture(scope="session")
def fk(robot):
    """q (29,) → (pelvis_T_left_ee, pelvis_T_right_ee) of the project's model."""
    from g1_teleop.core.pinocchio_model import build_pinocchio_model
    from g1_teleop.retarget.arm_ik import DualArmIK

    return DualArmIK(build_pinocchio_model(robot, floating_base=False), robot.joint_names).end_effector_poses


@pytest.fixture
def certificates(tmp_path: Path):
    """The WebXR server's certificate (and its CA) for 127.0.0.1 and localhost, made for the test."""
    from g1_teleop.operator.xr_certificates import make_certificates

    return make_certificates(tmp_path / "xr", ("127.0.0.1",), ("localhost",))
