"""The simulator restarted under a running policy: its /clock starts again from 0, and the policy follows it.

The real-time simulation graph with a process per node (``compose:=false``, the gantry on, no robot_state); once
commands flow, sim_bridge alone is stopped and started again. Its simulated time begins anew, every /clock sample far
behind the policy's clock: refused at first (anyone can publish a /clock), then, nothing else coming, taken as the
new timeline. Checked: the policy says so in its log, and its commands come again, stamped on the new timeline.
"""

from __future__ import annotations

import time

import numpy as np
import pytest
import rclpy
from rclpy.executors import SingleThreadedExecutor
from sensor_msgs.msg import JointState

from g1_teleop.launching.graph_description import load_graph
from g1_teleop.launching.process_runner import GraphProcesses
from g1_teleop.ros.messages import stamp_ns
from g1_teleop.ros.qos import QOS_OBSERVER

pytestmark = pytest.mark.integration
WALL_TIMEOUT_S = 60.0


def test_the_policy_follows_a_restarted_simulator(rclpy_context):
    nodes = [n for n in load_graph("sim").resolve({"lockstep": "false", "compose": "false", "gantry": "true"})
             if n.name != "robot_state"]
    lines: list[str] = []
    graph = GraphProcesses(nodes, output=lines.append)
    node = rclpy.create_node("restart_observer", context=rclpy_context)
    executor = SingleThreadedExecutor(context=rclpy_context)
    executor.add_node(node)
    commands: list[tuple[float, int]] = []  # (wall time received, stamp ns)
    node.create_subscription(JointState, "joint_command",
                             lambda m: commands.append((time.monotonic(), stamp_ns(m.header.stamp))), QOS_OBSERVER)

    def until(predicate, what: str) -> None:
        deadline = time.monotonic() + WALL_TIMEOUT_S
        while not predicate():
            assert graph.check() is None, f"{graph.failure}\n" + "\n".join(lines[-40:])
            assert time.monotonic() < deadline, f"{what}: not within {WALL_TIMEOUT_S} s\n" + "\n".join(lines[-40:])
            executor.spin_once(timeout_sec=0.02)

    graph.start()
    try:
        # (far enough that the restarted simulator is still short of it once discovered: 2.5 s seen here)
        until(lambda: commands and commands[-1][1] > 8_000_000_000, "commands past 8 s of simulated time")
        before_ns = commands[-1][1]
        graph.restart("sim_bridge")
        restarted = time.monotonic()
        until(lambda: any(t > restarted and s < before_ns for t, s in commands[-50:]),
              "a command stamped on the restarted simulator's time")
        first = next(i for i, (t, s) in enumerate(commands) if t > restarted and s < before_ns)
        until(lambda: len(commands) - first >= 50, "a second of commands on the new timeline")
        after = [s for _, s in commands[first:]]
        steps = np.diff(after)
        assert (steps > 0).all() and (steps % 20_000_000 == 0).all(), after  # on the 20 ms grid, in order
        assert any("/clock follows a new timeline from" in line for line in lines), "\n".join(lines[-40:])
        assert graph.alive() == [n.name for n in nodes]
    finally:
        graph.stop()
        executor.shutdown()
        node.destroy_node()
