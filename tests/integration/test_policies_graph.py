"""The simulation graph with OpenWBT's learned policies (controller openwbt), no gantry: four nodes as
separate processes in lockstep. The squat scenario stands 11 s while reaching forward, squats to a
0.494 m height command and stands up again while the wrists track; a 40 N lateral push for 0.2 s while standing and
another while squatting do not make it fall (tests/support/checks.py)."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest
import rclpy
from nav_msgs.msg import Odometry
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import Joy
from std_msgs.msg import String
from std_srvs.srv import Trigger

from g1_teleop.launching.graph_description import load_graph
from g1_teleop.launching.process_runner import GraphProcesses
from support.checks import PUSHES, check_arm_slew, check_pushes_taken, check_recorded, check_wrist_tracking

pytestmark = pytest.mark.integration

POLICIES = Path(__file__).resolve().parents[3] / "shared" / "policies" / "openwbt"


def test_squat_and_stand_up_while_reaching(sim_job, fk):
    if not (POLICIES / "squat.onnx").is_file():
        pytest.skip(f"OpenWBT policies not found at {POLICIES}: the reference data is not beside the repo")
    run = sim_job("--controller", "openwbt", "--policy-dir", str(POLICIES), "--scenario", "squat", *PUSHES)
    summary = run.summary
    assert summary["controller"] == "openwbt" and summary["gantry"] is False and len(summary["pushes"]) == 2
    assert summary["nodes_alive"] == summary["nodes_total"] and summary["fell"] is False, summary
    rec = run.recording()
    failures = (check_recorded(rec, min_sim_time_s=20.0) + check_wrist_tracking(rec, fk, max_p95_m=0.03, settle_s=1.0)
                + check_arm_slew(rec, max_step_rad=0.01) + check_pushes_taken(rec))
    assert not failures, "\n".join(failures)
    z = rec.odom_p[:, 2]
    standing = z[(rec.odom_t > 2.0) & (rec.odom_t < 5.0) | (rec.odom_t > 8.0) & (rec.odom_t < 11.0)]  # (pushed at 5 s)
    squatting = z[(rec.odom_t > 15.0) & (rec.odom_t < 16.0)]  # (then pushed)
    assert standing.min() > 0.75  # stands by itself: no gantry
    assert np.abs(squatting - 0.5).max() < 0.03  # the 0.494 m command, 0.5 m ± 3 cm
    assert z[rec.odom_t > 23.0].min() > 0.75  # stood up again


def test_switch_to_locomotion_walk_and_back(sim_job):
    if not (POLICIES / "loco.onnx").is_file():
        pytest.skip(f"OpenWBT policies not found at {POLICIES}: the reference data is not beside the repo")
    run = sim_job("--controller", "openwbt", "--policy-dir", str(POLICIES), "--scenario", "walk")
    summary = run.summary
    assert summary["nodes_alive"] == summary["nodes_total"] and summary["fell"] is False, summary
    log = (run.out / "nodes.log").read_text()
    assert log.index("LOCOMOTION requested (joy)") < log.index("mode LOCOMOTION") < log.index(
        "SQUAT requested (joy)") < log.index("mode SQUAT\n")
    rec = run.recording()
    walked = rec.odom_p[-1, 0] - rec.odom_p[0, 0]
    assert 0.75 * 2.1 < walked < 1.25 * 2.1, walked  # 7 s at 0.3 m/s (§14: 2.16 m at the end of the command)
    assert rec.odom_p[:, 2].min() > 0.7  # never below 0.7 m while standing or walking


def test_mode_switches_are_refused_with_a_reason_and_accepted_when_legal(rclpy_context, tmp_path):
    if not (POLICIES / "loco.onnx").is_file():
        pytest.skip(f"OpenWBT policies not found at {POLICIES}: the reference data is not beside the repo")
    lines: list[str] = []
    graph = GraphProcesses(load_graph("sim").resolve(
        {"controller": "openwbt", "policy_dir": str(POLICIES), "gantry": "false"}), output=lines.append)
    graph.start()
    node = rclpy.create_node("operator", context=rclpy_context)
    executor = SingleThreadedExecutor(context=rclpy_context)
    executor.add_node(node)
    joy = node.create_publisher(Joy, "joy", 10)
    modes: list[str] = []
    node.create_subscription(String, "teleop/mode", lambda m: modes.append(m.data), QoSProfile(
        depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL))
    clients = {name: node.create_client(Trigger, f"teleop/{name}") for name in ("locomotion", "squat")}
    pelvis_z: list[float] = []
    node.create_subscription(Odometry, "odom", lambda m: pelvis_z.append(m.pose.pose.position.z), 10)

    def spin(until, height_stick: float = 0.0, timeout_s: float = 60.0) -> None:
        deadline = time.monotonic() + timeout_s
        while not until():
            assert time.monotonic() < deadline, "timed out:\n" + "\n".join(lines)
            joy.publish(Joy(axes=[0.0, height_stick, 0.0, 0.0, 0.0, 0.0], buttons=[0, 0]))
            executor.spin_once(timeout_sec=0.02)

    def for_sim(seconds: float):
        start = len(pelvis_z)
        return lambda: len(pelvis_z) - start >= seconds / 0.02  # odom comes once per 20 ms period

    def call(name: str) -> Trigger.Response:
        future = clients[name].call_async(Trigger.Request())
        executor.spin_until_future_complete(future, timeout_sec=10.0)
        assert future.done(), f"teleop/{name} did not answer:\n" + "\n".join(lines)
        return future.result()

    try:
        for client in clients.values():
            assert client.wait_for_service(timeout_sec=60.0), "\n".join(lines)
        # The odometry first: on a loaded machine discovery can take seconds while the simulation runs.
        spin(lambda: len(pelvis_z) > 10)
        spin(lambda: pelvis_z[-1] < 0.70, height_stick=-1.0)  # squat: command below 0.72 m
        refused = call("locomotion")
        assert not refused.success and "stand up first" in refused.message, refused.message
        spin(lambda: pelvis_z[-1] > 0.76, height_stick=1.0)  # stand up (0.08 m/s at full stick)
        spin(for_sim(0.5), height_stick=1.0)  # the command at its top, 0.75 m
        accepted = call("locomotion")
        assert accepted.success, accepted.message
        spin(for_sim(2.0))
        assert modes[-1] == "LOCOMOTION", modes
        assert call("squat").success  # stopped: allowed
        spin(for_sim(2.0))
        assert modes[-1] == "SQUAT" and sorted(graph.alive()) == sorted(n.name for n in graph.nodes)
    finally:
        graph.stop()
        executor.shutdown()
        node.destroy_node()
