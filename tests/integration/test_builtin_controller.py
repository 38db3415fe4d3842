"""The simulation graph with the built-in standing and squat controller (the default), no gantry: four
nodes as separate processes in lockstep. The squat scenario stands 11 s while the hands reach forward,
squats to a 0.494 m height command, holds and stands up again while the wrists track; a 40 N lateral push for 0.2 s
while standing and another while squatting do not make it fall (tests/support/checks.py)."""

from __future__ import annotations

import numpy as np
import pytest
import rclpy
from rclpy.executors import SingleThreadedExecutor
from std_srvs.srv import Trigger

from g1_teleop.launching.graph_description import load_graph
from g1_teleop.launching.process_runner import GraphProcesses
from support.checks import PUSHES, check_arm_slew, check_pushes_taken, check_recorded, check_wrist_tracking

pytestmark = pytest.mark.integration


def test_stand_squat_and_stand_up_while_reaching(sim_job, fk):
    run = sim_job("--scenario", "squat", *PUSHES)
    summary = run.summary
    assert summary["controller"] == "builtin" and summary["gantry"] is False and len(summary["pushes"]) == 2
    assert summary["nodes_alive"] == summary["nodes_total"] and summary["fell"] is False, summary
    rec = run.recording()
    failures = (check_recorded(rec, min_sim_time_s=24.0) + check_wrist_tracking(rec, fk, max_p95_m=0.03, settle_s=1.0)
                + check_arm_slew(rec, max_step_rad=0.01) + check_pushes_taken(rec))
    assert not failures, "\n".join(failures)
    t, z = rec.odom_t, rec.odom_p[:, 2]
    assert z[t < 11.0].min() > 0.7  # stands by itself for 11 s (0.75 m command)
    assert np.abs(z[(t > 15.0) & (t < 16.0)] - 0.5).max() < 0.03  # the 0.494 m command, 0.5 m ± 3 cm (then pushed)
    assert z[t > 22.5].min() > 0.7  # stood up again
    assert np.linalg.norm(rec.odom_p[-1, :2] - rec.odom_p[0, :2]) < 0.1  # feet where they were


def test_locomotion_is_refused_with_the_reason(rclpy_context):
    lines: list[str] = []
    graph = GraphProcesses(load_graph("sim").resolve({}), output=lines.append)
    graph.start()
    node = rclpy.create_node("operator", context=rclpy_context)
    executor = SingleThreadedExecutor(context=rclpy_context)
    executor.add_node(node)
    client = node.create_client(Trigger, "teleop/locomotion")
    try:
        assert client.wait_for_service(timeout_sec=60.0), "\n".join(lines)
        future = client.call_async(Trigger.Request())
        executor.spin_until_future_complete(future, timeout_sec=10.0)
        assert future.done(), "teleop/locomotion did not answer:\n" + "\n".join(lines)
        response = future.result()
        assert not response.success
        assert response.message.startswith("no locomotion policy configured:"), response.message
        assert sorted(graph.alive()) == sorted(n.name for n in graph.nodes)
    finally:
        graph.stop()
        executor.shutdown()
        node.destroy_node()
