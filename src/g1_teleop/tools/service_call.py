"""`g1-teleop call ACTION`: the graph's std_srvs/Trigger services, for pip environments without `ros2 service call`.

Prints the answer and exits 0 when the server accepted, 1 when it refused (the reason is the answer's
message), 2 when no server answered within the timeout. :class:`TriggerClients` also serves the keyboard
teleop, which calls the same services without blocking.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

from rcl_interfaces.srv import GetParameters
from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy
from std_srvs.srv import Trigger

from g1_teleop.tools.cli_node import CliNode, GraphUnreachable, cli_node


@dataclass(frozen=True)
class TriggerService:
    """One operator service: its name relative to the graph's namespace, and the node that serves it."""

    name: str
    server: str


# The operator actions of the graph (README, "The graph" and "Bringing up a robot safely").
TRIGGER_SERVICES: dict[str, TriggerService] = {
    "start": TriggerService("hw_bridge/start", "hw_bridge (the real graph: g1-teleop launch real …)"),
    "activate": TriggerService("hw_bridge/activate", "hw_bridge (the real graph: g1-teleop launch real …)"),
    "estop": TriggerService("hw_bridge/estop", "hw_bridge (the real graph: g1-teleop launch real …)"),
    "squat": TriggerService("teleop/squat", "the policy node (g1-teleop launch sim, or real)"),
    "locomotion": TriggerService("teleop/locomotion", "the policy node (g1-teleop launch sim, or real)"),
    "play": TriggerService("xr_input/play", "xr_input (g1-teleop launch sim, or real)"),
    "engage": TriggerService("teleop/engage", "retarget (g1-teleop launch sim, or real; clutch operator)"),
    "pause": TriggerService("teleop/pause", "retarget (g1-teleop launch sim, or real; clutch operator)"),
}


@dataclass(frozen=True)
class TriggerAnswer:
    """A server's answer: accepted or refused, with its message (the reason when refused)."""

    service: str  # fully qualified name
    success: bool
    message: str

    def line(self) -> str:
        return f"{self.service}: {'accepted' if self.success else 'refused'}: {self.message}"


class TriggerClients:
    """Clients of the operator services in one node's namespace."""

    def __init__(self, session: CliNode) -> None:
        self.session = session
        self.clients = {action: session.node.create_client(Trigger, service.name)
                        for action, service in TRIGGER_SERVICES.items()}

    def call(self, action: str, timeout_s: float) -> TriggerAnswer:
        """Call and wait for the answer; raises GraphUnreachable when none comes within ``timeout_s``."""
        client, service = self.clients[action], TRIGGER_SERVICES[action]
        name, where = self.session.resolve(service.name), self.session.where()
        if not client.wait_for_service(timeout_sec=timeout_s):
            raise GraphUnreachable(
                f"no server answers {name} within {timeout_s:g} s ({where}): is {service.server} running, in "
                f"that namespace (--namespace) and with the same ROS_DOMAIN_ID?")
        if not self._server_knows_this_client(name, timeout_s):
            raise GraphUnreachable(f"the node serving {name} answered no parameter request within {timeout_s:g} s "
                                   f"({where}): is {service.server} stalled, or the network to it losing most "
                                   "packets? Its log says why.")
        future = client.call_async(Trigger.Request())
        if not self.session.spin_until(future.done, timeout_s):
            raise GraphUnreachable(f"the server of {name} gave no answer within {timeout_s:g} s ({where}): is "
                                   f"{service.server} stalled? Its log says why. (Across a lossy network an answer "
                                   "can still be lost: call again)")
        return self._answer(action, future.result())

    def _server_knows_this_client(self, service: str, timeout_s: float) -> bool:
        """Whether the server's process has discovered this node's reply readers (False: no sign of it in time).

        A server sends an answer only to a reply reader it has discovered, and waits 100 ms for it (the reply
        writer's max_blocking_time, rmw_fastrtps's send_response) before it drops the answer. Across a lossy link
        the discovery of a new process's readers can come seconds after its request, which arrives at once: on the
        two-hosts test's link (20 ms, 5 % loss) 10 of 45 new `call` processes never got their answer. A participant
        announces its readers reliably and in order, so once the server's node answers on a reader made after the
        clients of :meth:`__init__`, it knows theirs: its get_parameters (read-only, nothing asked) is asked every
        0.5 s until it answers (then 1 of 100 lost). True without asking when the graph names no serving node within
        ``timeout_s``, or that node has no parameter services.
        """
        deadline = time.monotonic() + timeout_s
        while (served := self._server_node(service)) is None:
            if time.monotonic() >= deadline:
                return True
            self.session.executor.spin_once(timeout_sec=0.05)
        host, services = served
        if f"{host}/get_parameters" not in services:
            return True
        probe = self.session.node.create_client(GetParameters, f"{host}/get_parameters")
        try:
            while (left := deadline - time.monotonic()) > 0:
                if not probe.wait_for_service(timeout_sec=left):
                    return False
                future = probe.call_async(GetParameters.Request())
                if self.session.spin_until(future.done, min(0.5, deadline - time.monotonic())):
                    return True
                probe.remove_pending_request(future)
            return False
        finally:
            self.session.node.destroy_client(probe)

    def _server_node(self, service: str) -> tuple[str, set[str]] | None:
        """A node that serves ``service`` (fully qualified): its fully qualified name and the services it serves;
        None if the graph has none."""
        node = self.session.node
        for name, namespace in node.get_node_names_and_namespaces():
            try:
                served = {served_name for served_name, _ in node.get_service_names_and_types_by_node(name, namespace)}
            except _rclpy.NodeNameNonExistentError:  # it left the graph meanwhile
                continue
            if service in served:
                return f"{namespace.rstrip('/')}/{name}", served
        return None

    def call_async(self, action: str, on_answer: Callable[[str], None]) -> None:
        """Call without waiting: ``on_answer`` gets the answer's line from the executor, or at once a line
        saying that no server is there."""
        client = self.clients[action]
        if not client.service_is_ready():
            service = TRIGGER_SERVICES[action]
            on_answer(f"{self.session.resolve(service.name)}: no server: is {service.server} running?")
            return
        future = client.call_async(Trigger.Request())
        future.add_done_callback(lambda done: on_answer(self._answer(action, done.result()).line()))

    def _answer(self, action: str, response: Trigger.Response) -> TriggerAnswer:
        return TriggerAnswer(self.session.resolve(TRIGGER_SERVICES[action].name), response.success, response.message)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=list(TRIGGER_SERVICES),
                        help="; ".join(f"{action}: {service.name}" for action, service in TRIGGER_SERVICES.items()))
    parser.add_argument("--namespace", default="", help="the graph's ROS namespace, e.g. /g1")
    parser.add_argument("--timeout", type=float, default=5.0, help="seconds to wait for the server and its answer")


def run_from_args(args: argparse.Namespace) -> int:
    """0: accepted; 1: refused (the reason printed); 2: no answer within the timeout."""
    try:
        with cli_node("call", args.namespace) as session:
            answer = TriggerClients(session).call(args.action, args.timeout)
    except GraphUnreachable as exc:
        print(f"g1-teleop call {args.action}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    print(answer.line())
    return 0 if answer.success else 1
