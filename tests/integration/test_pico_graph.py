"""PICO through its own SDK drives the simulated graph: a fake XRoboToolkit PC Service
(tests/support/fake_pico_service.py, a separate process serving PXREAService.EAService as the SDK expects it) streams
an operator's head, controllers, hands and body points; the real, unmodified ``xrobotoolkit_sdk`` in xr_input reads
them (pointed at the fake's port by a PXREASetting.ini in the working directory, as the SDK reads it); the simulation
graph (its nodes over DDS) runs with ``source:=pico xr_input_mode:=controllers`` in real time, as a live operator
drives it. (In lockstep the simulation outran the stream: in a full check and in 1 of 5 runs here the wrists ended
21.7 and 64 mm from the target of the operator's 64 mm move.)

Checked: xr/status connected, the clutch waits for the operator, both grips held engage it (the controllers' Joy
layout end to end), the robot's wrists then follow the operator's motion, the body points reach xr/body in
operator_world as body_stream's conversion gives them, and when the service stops xr/status says what to start and
the clutch holds. With ``pico_retarget:=body``: body_retarget (not retarget) calibrates on PICO's body standing still,
then its arm targets are the joints of the known pose behind the body points (the whole-body demo's).
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
from g1_teleop.retarget.whole_body import WholeBodyRetargeter
from g1_teleop.retarget.whole_body_motion import body_frames, demo_motion
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


def start_graph(tmp_path: Path, monkeypatch, body: Path, graph_values: dict[str, str]) \
        -> tuple[int, subprocess.Popen, GraphProcesses, list[str]]:
    """The fake service on a free port (PXREASetting.ini in the working directory points the SDK there) and the
    simulated graph (no robot_state) with source pico and ``graph_values``."""
    port = free_port()
    (tmp_path / "PXREASetting.ini").write_text(f"[Client]\nconnectAddr=127.0.0.1\nconnectPort={port}\n")
    monkeypatch.chdir(tmp_path)  # the graph's processes start here: xr_input's SDK reads the settings file
    # 250 states per wall second (the client polls at 90 Hz): the lockstep simulation runs faster than real time
    service = subprocess.Popen([sys.executable, str(FAKE_SERVICE), "--port", str(port), "--rate", "250", "--body",
                                str(body)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True)
    first = service.stdout.readline()
    assert first.startswith("fake PICO service listening"), first + service.communicate(timeout=10)[0]
    nodes = [n for n in load_graph("sim").resolve({"source": "pico", **graph_values}) if n.name != "robot_state"]
    lines: list[str] = []
    graph = GraphProcesses(nodes, output=lines.append)
    graph.start()
    return port, service, graph, lines


def stop_graph(service: subprocess.Popen, graph: GraphProcesses) -> str:
    graph.stop()
    if service.poll() is None:
        service.kill()
    return service.communicate(timeout=10)[0] if service.stdout else ""


def waiter(graph: GraphProcesses, lines: list[str]) -> Callable[..., None]:
    def until(predicate: Callable[[], bool], what: str, timeout_s: float = WALL_TIMEOUT_S) -> None:
        deadline = time.monotonic() + timeout_s
        while not predicate():
            assert graph.check() is None, f"{graph.failure}\n" + "\n".join(lines[-60:])
            assert time.monotonic() < deadline, f"{what}: not within {timeout_s} s\n" + "\n".join(lines[-60:])
            time.sleep(0.02)
    return until


def test_pico_through_its_sdk_drives_the_arms_and_streams_the_body(rclpy_context, fk, robot, tmp_path,
                                                                  monkeypatch):
    stream = body_file(tmp_path / "body.npz")
    port, service, graph, lines = start_graph(tmp_path, monkeypatch, tmp_path / "body.npz",
                                        {"xr_input_mode": "controllers", "lockstep": "false"})
    seen = Observer(rclpy_context, robot.joint_names)
    bodies: list[PoseArray] = []
    seen.node.create_subscription(PoseArray, "xr/body", bodies.append, QOS_SENSOR)

    until = waiter(graph, lines)

    def operator(command: str) -> None:
        service.stdin.write(command + "\n")
        service.stdin.flush()

    def robot_wrists() -> np.ndarray:
        return np.array([T[:3, 3] for T in fk(seen.states[-1][1])])

    try:
        until(lambda: any(s.startswith(f"PICO at 127.0.0.1:{port} connected: controllers") for s in seen.status),
              f"xr/status connected (got {seen.status[-1:]})", timeout_s=90)
        until(lambda: seen.clutch_state() is not None, "teleop/clutch (latched)")
        assert seen.clutch_state() == "disengaged"

        until(lambda: len(bodies) > 3, "xr/body")
        body = bodies[-1]
        assert body.header.frame_id == "operator_world" and len(body.poses) == 24
        positions = np.array([(p.position.x, p.position.y, p.position.z) for p in body.poses])
        quat = np.array([(p.orientation.w, p.orientation.x, p.orientation.y, p.orientation.z) for p in body.poses])
        np.testing.assert_allclose(positions, stream.positions[0], atol=2e-5)
        np.testing.assert_allclose(np.abs((quat * stream.quat_wxyz[0]).sum(axis=1)), 1.0, atol=2e-5)

        for _ in range(5):  # both squeezes held 0.5 s: ENGAGE (pressed again, as an operator does, when it was
            operator("grips 1 1")  # refused: the engage needs valid tracking at that moment)
            deadline = time.monotonic() + 3.0
            while seen.clutch_state() != "engaged" and time.monotonic() < deadline:
                time.sleep(0.02)
            operator("grips 0 0")
            if seen.clutch_state() == "engaged":
                break
            time.sleep(1.0)
        until(lambda: seen.clutch_state() == "engaged", "engaged by both grips")
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
        service_log = stop_graph(service, graph)
    assert "beat" in service_log and "watch pid" in service_log, service_log


def test_pico_body_tracking_drives_body_retarget(rclpy_context, robot, tmp_path, monkeypatch):
    retargeter = WholeBodyRetargeter(robot)
    motion = demo_motion(retargeter, 15.0)
    standing, swung = 0, int(np.searchsorted(motion.stamps, 3.5))  # still; 1.5 s into the arm swings
    positions, quat = body_frames(retargeter, motion)
    save_body_stream(tmp_path / "body.npz", BodyStream(np.array([0.0, 1.0]), positions[[standing, swung]],
                                                       quat[[standing, swung]]))
    _, service, graph, lines = start_graph(tmp_path, monkeypatch, tmp_path / "body.npz", {"pico_retarget": "body"})
    service.stdin.write("frame 0\n")  # the operator stands still
    service.stdin.flush()
    seen = Observer(rclpy_context, robot.joint_names)
    until = waiter(graph, lines)
    arms, waist = robot.group_names("arms"), robot.group_names("waist")
    try:
        assert {n.name for n in graph.nodes} >= {"body_retarget", "xr_input"} and "retarget" not in {
            n.name for n in graph.nodes}
        until(lambda: any("body_retarget]: calibrated" in line for line in lines), "body_retarget calibrated",
              timeout_s=90)
        until(lambda: seen.arm_targets and set(waist) <= set(seen.arm_targets[-1][1]), "waist targets")
        service.stdin.write("frame 1\n")  # the arms swung
        service.stdin.flush()
        goal = motion.joints[swung][robot.group("arms")]

        def arm_error() -> float:
            target = seen.arm_targets[-1][1]
            return float(np.abs(np.array([target[name] for name in arms]) - goal).max())

        until(lambda: arm_error() < 1e-4, "arm targets at the swung pose")
        print(f"\nPICO body: body_retarget's arm targets within {arm_error():.1e} rad of the known pose")
    finally:
        seen.close()
        stop_graph(service, graph)
