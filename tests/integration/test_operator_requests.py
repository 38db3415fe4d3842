"""The operator of soak and the benches (tools.virtual_graph.Operator) asks a service again when its answer does not
come, and says so; a service that never answers still ends the call with the reason. The service is a real rclpy
node in a process of its own that holds requests before it answers them."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from g1_teleop.launching.process_runner import GraphProcesses
from g1_teleop.tools.virtual_graph import CALL_ATTEMPTS, Operator

pytestmark = pytest.mark.integration

SLOW_SERVICE = textwrap.dedent("""
    import sys, time
    import rclpy
    from std_srvs.srv import Trigger

    held_s, held_requests = float(sys.argv[1]), int(sys.argv[2])
    rclpy.init()
    node = rclpy.create_node("slow_bridge", namespace="hw_bridge")
    count = 0

    def answer(_, response):
        global count
        count += 1
        if count <= held_requests:
            time.sleep(held_s)
        response.success, response.message = True, f"request {count}"
        return response

    node.create_service(Trigger, "start", answer)
    print("ready", flush=True)
    rclpy.spin(node)
""")


@pytest.fixture
def slow_service(ros_domain):
    """Start the service ``hw_bridge/start`` holding its first ``held_requests`` requests ``held_s`` each."""
    processes = []

    def start(held_s: float, held_requests: int) -> None:
        process = subprocess.Popen([sys.executable, "-c", SLOW_SERVICE, str(held_s), str(held_requests)],
                                   stdout=subprocess.PIPE, text=True)
        processes.append(process)
        assert process.stdout is not None and process.stdout.readline().strip() == "ready"

    yield start
    for process in processes:
        process.kill()  # (it may be holding a request)
        process.wait(timeout=10)


@pytest.fixture
def operator(ros_domain):
    operator = Operator(GraphProcesses([]), [], ros_domain, "_test_operator")
    yield operator
    operator.close()


def test_a_request_without_an_answer_is_sent_again(slow_service, operator, capsys):
    slow_service(held_s=3.0, held_requests=1)  # the second request, sent at 2 s, is answered at about 3 s
    answer = operator.call("hw_bridge/start", answer_timeout_s=2.0)
    assert answer.success and answer.message == "request 2"  # the first one's late answer is not taken for it
    assert f"no answer from hw_bridge/start within 2 s: asking again (2 of {CALL_ATTEMPTS})" in capsys.readouterr().err


def test_a_service_that_never_answers_ends_the_call_with_the_reason(slow_service, operator):
    slow_service(held_s=30.0, held_requests=CALL_ATTEMPTS)
    with pytest.raises(RuntimeError, match=f"no answer from hw_bridge/start to {CALL_ATTEMPTS} requests of 0.5 s each"):
        operator.call("hw_bridge/start", answer_timeout_s=0.5)
