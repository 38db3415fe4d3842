"""A node's parameters describe themselves over ROS (what `ros2 param describe` shows) from the same declaration
that checks them, and a value outside its legal range stops the node at start in one line."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest
from rcl_interfaces.msg import ParameterType
from rcl_interfaces.srv import DescribeParameters

pytestmark = pytest.mark.integration


def test_xr_input_describes_its_parameters(rclpy_context, tmp_path) -> None:
    import rclpy

    name = f"xr_input_{os.getpid()}"  # a name of its own: no other test's xr_input answers
    proc = subprocess.Popen([sys.executable, "-m", "g1_teleop.nodes.xr_input", "--ros-args", "-r", f"__node:={name}",
                             "-p", "lockstep:=false"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    node = rclpy.create_node("describe_probe", context=rclpy_context)
    try:
        client = node.create_client(DescribeParameters, f"/{name}/describe_parameters")
        deadline = time.monotonic() + 60.0
        while not client.wait_for_service(timeout_sec=0.5):
            assert proc.poll() is None, proc.stdout.read()
            assert time.monotonic() < deadline, "xr_input did not come up within 60 s"
        future = client.call_async(DescribeParameters.Request(names=["wrist_reference", "rate_hz", "lockstep"]))
        executor = rclpy.executors.SingleThreadedExecutor(context=rclpy_context)
        executor.add_node(node)
        executor.spin_until_future_complete(future, timeout_sec=10.0)
        wrist, rate, lockstep = future.result().descriptors
    finally:
        node.destroy_node()
        proc.terminate()
        proc.wait(timeout=20)
    assert "head" in wrist.description and wrist.read_only
    assert wrist.additional_constraints.startswith("one of ") and "body" in wrist.additional_constraints
    assert "(Hz)" in rate.description and rate.type == ParameterType.PARAMETER_DOUBLE
    assert lockstep.type == ParameterType.PARAMETER_BOOL and lockstep.description


def test_a_value_outside_its_range_stops_the_node_in_one_line(ros_domain) -> None:
    proc = subprocess.run([sys.executable, "-m", "g1_teleop.nodes.xr_input", "--ros-args",
                           "-p", "wrist_reference:=elbow"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    output = proc.stdout + proc.stderr
    assert "Traceback" not in output
    lines = [line for line in output.splitlines() if "cannot start" in line]
    assert len(lines) == 1 and "wrist_reference" in lines[0] and "elbow" in lines[0], output
