"""PICO through its own SDK drives the simulated graph: a fake XRoboToolkit PC Service
(tests/support/fake_pico_service.py, a separate process serving PXREAService.EAService as the SDK expects it) streams
an operator's head, controllers, hands and body points; the real, unmodified ``xrobotoolkit_sdk`` in xr_input reads
them (pointed at the fake's port by a PXREASetting.ini in the working directory, as the SDK reads it); the simulation
graph (lockstep, every node a process over DDS) runs with ``source:=pico xr_input_mode:=controllers``.

Checked: xr/status connected, the clutch waits for the operator, both grips held engage it (the controllers' Joy
layout end to end), the robot's wrists then follow the operator's motion, the body points reach xr/body in
operator_world as body_stream's conversion gives them, and when the service stops xr/status says what to start and
the clutch holds.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from geometry_msgs.msg import PoseArray
from scipy.spatial.transform import Rotation

from g1_teleop.launching.graph_description import load_graph
from g1_teleop.launching.process_runner import GraphProcesses
from g1_teleop.operator.body_stream import BodyStream, save_body_stream
from g1_teleop.ros.qos import QOS_SENSOR
from integration.test_webxr_graph import Observer
from support.ports import free_port

pytest.importorskip("xrobotoolkit_sdk")
pytestmark = pytest.mark.integration
FAKE_SERVICE = Path(__file__).resolve().parents[1] / "support" / "fake_pico_service.py"
WALL_TIMEOUT_S = 40.0


def body_file(path: Path) -> BodyStream:
    """Two frames of 24 body points (z-up, m) with their own orientations: what xr/body must carry."""
    rng = np.random.default_rng(11)
    positions = np.repeat(rng.uniform([-0.3, -0.3, 0.0], [0.3, 0.3, 1.8], (1, 24, 3)), 2, axis=0)
    quat = np.repeat(Rotation.random(24, random_state=11).as_quat()[None][..., [3, 0, 1, 2]], 2, axis=0)
    stream = BodyStream(np.array([0.0, 1.0]), positions, quat)
    save_body_stream(path, stream)
    return stream


def test_pico_through_its_sdk_drives_the_arms_and_streams_the_body(rclpy_context, fk, robot, tmp_path,
                                                                  monkeypatch):
    port = free_port()
    (tmp_path / "PXREASetting.ini").write_text(f"[Client]\nconnectAddr=127.0.0.1\nconnectPort={port}\n")
    monkeypatch.chdir(tmp_path)  # the graph's processes start here: xr_input's SDK reads the settings file
    stream = body_file(tmp_path / "body.npz")
    # 250 states per wall second (the client polls at 90 Hz): the lockstep simulation runs faster than real time
    service = subprocess.Popen([sys.executable, str(FAKE_SERVICE), "--port", str(port), "--rate", "250", "--body",
                                str(tmp_path / "body.npz")], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
    first = service.stdout.readline()
    assert first.startswith("fake PICO service listening"), first + service.communicate(timeout=10)[0]
    nodes = [n for n in load_graph("sim").resolve({"source": "pico", "xr_input_mode": "controllers"})
             if n.name != "robot_state"]
    lines: list[str] = []
    graph = GraphProcesses(nodes, output=lines.append)
    graph.start()
    seen = Observer(rclpy_context, robot.joint_names)
    bodies: list[PoseArray] = []
    seen.node.create_subscription(PoseArray, "xr/body", bodies.append, QOS_SENSOR)

    def log() -> str:
        return "\n".join(lines[-60:])

    def until(predicate: Callable[[], bool], what: str, timeout_s: float = WALL_TIMEOUT_S) -> None:
        deadline = time.monotonic() + timeout_s
        while not predicate():
            assert graph.check() is None, f"{graph.failure}\n{log()}"
            assert time.monotonic() < deadline, f"{what}: not within {timeout_s} s\n{log()}"
            time.sleep(0.02)

    def operator(command: str) -> None:
        service.stdin.write(command + "\n")
        service.stdin.flush()

    def robot_wrists() -> np.ndarray:
        return np.array([T[:3, 3] for T in fk(seen.states[-1][1])])

    try:
        until(lambda: any(s.startswith(f"PICO at 127.0.0.1:{port} connected: controllers") for s in seen.status),
              f"xr/status connected (got {seen.status[-1:]})", timeout_s=90)
        assert seen.clutch_state() == "disengaged"

        until(lambda: len(bodies) > 3, "xr/body")
        body = bodies[-1]
        assert body.header.frame_id == "operator_world" and len(body.poses) == 24
        positions = np.array([(p.position.x, p.position.y, p.position.z) for p in body.poses])
        quat = np.array([(p.orientation.w, p.orientation.x, p.orientation.y, p.orientation.z) for p in body.poses])
        np.testing.assert_allclose(positions, stream.positions[0], atol=2e-5)
        np.testing.assert_allclose(np.abs((quat * stream.quat_wxyz[0]).sum(axis=1)), 1.0, atol=2e-5)

        operator("grips 1 1")  # both squeezes held 0.5 s: ENGAGE
        until(lambda: seen.clutch_state() == "engaged", "engaged by both grips")
        operator("grips 0 0")
        anchor, start = robot_wrists(), seen.now()
        operator("offset 0.04 0.0 0.05")
        until(lambda: seen.now() > start + 2.0, "2 s of simulated time")
        error = np.linalg.norm(robot_wrists() - anchor - np.array([0.04, 0.0, 0.05]), axis=1)
        print(f"\nPICO: wrists followed within {error.max() * 1e3:.1f} mm; {len(bodies)} body frames on xr/body")
        assert error.max() < 0.015, f"followed {(robot_wrists() - anchor) * 1e3} mm for (40, 0, 50) mm"

        service.terminate()
        service.wait(timeout=10)
        until(lambda: seen.status[-1].startswith(f"no PICO service at 127.0.0.1:{port}: start XRoboToolkit PC "
                                                 "Service"), "xr/status: the service is gone")
        until(lambda: seen.clutch_state() in ("holding", "homing"), "the clutch holding")
    finally:
        seen.close()
        graph.stop()
        if service.poll() is None:
            service.kill()
        service_log = service.communicate(timeout=10)[0] if service.stdout else ""
    assert "beat" in service_log and "watch pid" in service_log, service_log
