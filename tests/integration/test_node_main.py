"""ros.node_main and ros.executor over real DDS: a /clock message rclpy's time source refuses is dropped by the
guard (the clock keeps its last valid time, the executor never sees an exception) on each executor a node can spin
on; and a node stopped by SIGTERM while it publishes from a timer exits 0 without a FATAL line."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from builtin_interfaces.msg import Time
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock

from g1_teleop.ros import executor as executors
from g1_teleop.ros.node_main import guard_time_source


@pytest.mark.parametrize("kind", ["single", "events"])
def test_a_refused_clock_message_is_dropped_and_the_clock_keeps_its_time(rclpy_context, monkeypatch, kind):
    monkeypatch.setenv(executors.EXECUTOR_VARIABLE, kind)
    executor = executors.make_executor(context=rclpy_context)
    node = Node("guarded", context=rclpy_context, parameter_overrides=[Parameter("use_sim_time", value=True)])
    sender = Node("clock_sender", context=rclpy_context)
    refused: list[Exception] = []
    guard_time_source(node, refused.append)
    executor.add_node(node)
    publisher = sender.create_publisher(Clock, "/clock", QoSProfile(depth=1, reliability=ReliabilityPolicy.BEST_EFFORT))
    try:
        deadline = time.monotonic() + 10.0
        while publisher.get_subscription_count() < 1 and time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.05)

        def send(sec: int) -> None:
            publisher.publish(Clock(clock=Time(sec=sec)))
            end = time.monotonic() + 0.3
            while time.monotonic() < end:
                executor.spin_once(timeout_sec=0.05)  # raises if the time source's exception reached the executor

        send(5)
        assert node.get_clock().now().nanoseconds == 5_000_000_000
        send(-3)
        assert len(refused) == 1, refused
        assert node.get_clock().now().nanoseconds == 5_000_000_000
        send(7)
        assert node.get_clock().now().nanoseconds == 7_000_000_000 and len(refused) == 1
    finally:
        executor.shutdown()
        node.destroy_node()
        sender.destroy_node()


NODE = """
from std_msgs.msg import String
from rclpy.node import Node
from g1_teleop.ros.node_main import run

class Talker(Node):
    def __init__(self):
        super().__init__("talker")
        self.pub = self.create_publisher(String, "chatter", 10)
        self.create_timer(0.001, lambda: self.pub.publish(String(data="x" * 1000)))
        print("spinning", flush=True)

run(Talker)
"""


def test_a_node_stopped_while_it_publishes_exits_cleanly(ros_domain):
    """SIGTERM to a node publishing from a 1 kHz timer: exit 0, no FATAL line (rclpy's own handler shut the
    context down under the EventsExecutor's pending timers: 'publisher's context is invalid')."""
    for attempt in range(5):
        proc = subprocess.Popen([sys.executable, "-c", NODE], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True,
                                env={**os.environ, "ROS_DOMAIN_ID": str(ros_domain)})
        assert proc.stdout.readline().strip() == "spinning"
        time.sleep(0.3 + 0.1 * attempt)
        proc.send_signal(signal.SIGTERM)
        out = proc.communicate(timeout=10)[0]
        assert proc.returncode == 0, out
        assert "FATAL" not in out and "Traceback" not in out, out
