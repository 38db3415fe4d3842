"""The real graph against the virtual robot on loopback, and this process as its operator (soak, bench damping).

``real`` with ``robot:=virtual``: the robot's topics on a private CycloneDDS domain over lo, the ROS side on a private
domain with localhost-only discovery, so nothing here reaches a robot or a graph on the network. The operator is a ROS
node of this process: the bridge's state from its diagnostics, its services, and the bring-up an operator does (start,
then activate once the policy's commands arrive). Times: wall seconds (monotonic).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from g1_teleop.control.tick_delays import DELAYS, figure_key

if TYPE_CHECKING:
    from diagnostic_msgs.msg import DiagnosticArray
    from std_srvs.srv import Trigger

    from g1_teleop.launching.graph_description import NodeSpec
    from g1_teleop.launching.process_runner import GraphProcesses

SERVICES = ("hw_bridge/start", "hw_bridge/activate", "xr_input/play")


@dataclass(frozen=True)
class GraphPriorities:
    """The real graph's SCHED_FIFO priorities (its arguments; 0: normal scheduling): ``lowcmd`` for hw_bridge's
    LowCmd process and the virtual robot, ``control`` for the policy and hw_bridge's ROS side, ``operator`` for
    xr_input and the retargeting nodes."""

    lowcmd: int = 0
    control: int = 0
    operator: int = 0

    @classmethod
    def under(cls, priority: int) -> GraphPriorities:
        """The tiers a robot's computer gets under one number (README, bringing up a robot, step 6): P for the
        LowCmd path, P-10 for control, P-15 for the operator's nodes; 0: normal scheduling for all."""
        if not priority:
            return cls()
        return cls(priority, max(1, priority - 10), max(1, priority - 15))

    def arguments(self) -> dict[str, str]:
        return {"lowcmd_priority": str(self.lowcmd), "control_priority": str(self.control),
                "operator_priority": str(self.operator)}

    def describe(self) -> str:
        """One line for a tool's output."""
        return (f"SCHED_FIFO {self.lowcmd} for the LowCmd process and the virtual robot, {self.control} for the "
                f"policy and hw_bridge, {self.operator} for xr_input and retarget")


@dataclass(frozen=True)
class VirtualGraphConfig:
    """Which graph: controller and scenario, the private domains, hw_bridge's LowState timeout (s; None: the
    bridge's shipped default), the graph's priorities and the cores kept for its command chain (``control_cpus``, a
    CPU list; empty: none)."""

    ros_domain_id: int
    robot_domain_id: int
    controller: str = "builtin"
    scenario: str = "default"
    state_timeout_s: float | None = None
    priorities: GraphPriorities = GraphPriorities()
    control_cpus: str = ""

    def other_cpus(self) -> frozenset[int]:
        """The cores of the graph's processes outside the command chain, and of a tool beside it (its readers,
        stress-ng): those ``control_cpus`` leaves, or all this process may use when it keeps none."""
        from g1_teleop.core.cpu_affinity import parse_cpu_list, usable_cpus

        return usable_cpus() - parse_cpu_list(self.control_cpus)

    @property
    def env(self) -> dict[str, str]:
        """The graph's environment: its ROS domain, discovery on this machine only."""
        return {"ROS_DOMAIN_ID": str(self.ros_domain_id), "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}


def virtual_graph_nodes(cfg: VirtualGraphConfig) -> list[NodeSpec]:
    """The nodes of ``real`` with ``robot:=virtual`` on lo, hw_bridge's LowState timeout as configured."""
    from g1_teleop.launching.graph_description import load_graph

    nodes = load_graph("real").resolve({"robot": "virtual", "network_interface": "lo",
                                        "robot_domain_id": str(cfg.robot_domain_id), "controller": cfg.controller,
                                        "scenario": cfg.scenario, "control_cpus": cfg.control_cpus,
                                        **cfg.priorities.arguments()})
    if cfg.state_timeout_s is not None:
        nodes = [dataclasses.replace(n, parameters={**n.parameters, "state_timeout_s": cfg.state_timeout_s})
                 if n.name == "hw_bridge" else n for n in nodes]
    return nodes


def last_lines(log: list[str], count: int, node: str = "") -> str:
    """The last ``count`` lines of a graph's output (GraphProcesses': each line prefixed ``[name]``); with ``node``,
    that node's only (another node's repeated lines would hide them)."""
    lines = [line for line in log if line.startswith(f"[{node} ") or line.startswith(f"[{node}]")] if node else log
    return "\n".join(lines[-count:])


_LATE, _TAKE, _STEP = DELAYS
POLICY_TICK_FIGURES = (figure_key(_LATE, "p99"), figure_key(_LATE, "max"), figure_key(_TAKE, "p99"),
                       figure_key(_STEP, "p99"))  # soak's line: the policy's worst window of each


class Operator:
    """This process's ROS node on the graph's domain: the bridge's state, its services, spinning while the graph is
    watched (a required node that exits, or a wait that times out, raises RuntimeError with the graph's last lines)."""

    def __init__(self, graph: GraphProcesses, log: list[str], ros_domain_id: int, name: str = "operator") -> None:
        import rclpy
        from diagnostic_msgs.msg import DiagnosticArray
        from rclpy.executors import SingleThreadedExecutor
        from std_srvs.srv import Trigger

        self.graph, self.log = graph, log
        self.bridge_state = "none"  # hw_bridge's state from its diagnostics
        self.policy_ticks: dict[str, float] = {}  # the policy's worst tick figures since taken (take_policy_ticks)
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=ros_domain_id)
        self.node = rclpy.create_node(name, context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self._trigger = Trigger
        self.node.create_subscription(DiagnosticArray, "diagnostics", self._on_diagnostics, 10)
        self._clients = {service: self.node.create_client(Trigger, service) for service in SERVICES}

    def _on_diagnostics(self, msg: DiagnosticArray) -> None:
        for status in msg.status:
            if status.name.endswith("hw_bridge"):
                self.bridge_state = status.message.split(":")[0]
            elif status.name.endswith("policy"):  # (a window's figures may come twice: the worst is kept)
                for kv in status.values:
                    if kv.key in POLICY_TICK_FIGURES:
                        self.policy_ticks[kv.key] = max(float(kv.value), self.policy_ticks.get(kv.key, 0.0))

    def take_policy_ticks(self) -> dict[str, float]:
        """The worst of each of the policy's tick figures (ms, per diagnostics window: control/tick_delays.py) since
        the last take."""
        taken, self.policy_ticks = self.policy_ticks, {}
        return taken

    def last_lines(self, count: int = 20, node: str = "") -> str:
        return last_lines(self.log, count, node)

    def spin_until(self, condition: Callable[[], bool], timeout_s: float, what: str) -> None:
        """Spin until ``condition``; RuntimeError "{what} within {timeout_s} s" when it does not come."""
        deadline = time.monotonic() + timeout_s
        while not condition():
            if (failure := self.graph.check()) is not None:
                raise RuntimeError(f"{failure}; its last lines:\n{self.last_lines()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"{what} within {timeout_s:g} s; the graph's last lines:\n{self.last_lines()}")
            self.executor.spin_once(timeout_sec=0.01)

    def spin_for(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        self.spin_until(lambda: time.monotonic() >= deadline, seconds + 1.0, "")

    def call(self, service: str) -> Trigger.Response:
        """Call one of ``SERVICES`` and return its answer."""
        client = self._clients[service]
        self.spin_until(client.service_is_ready, 60.0, f"no service {service}")
        future = client.call_async(self._trigger.Request())
        self.spin_until(future.done, 15.0, f"no answer from {service}")  # (a loaded machine delays it)
        return future.result()

    def trip_lines(self) -> list[str]:
        """The bridge's log lines of its transitions to DAMP so far, its own shutdown not counted."""
        return [line for line in self.log if "→ DAMP" in line and "(bridge shutdown)" not in line]

    def trips(self) -> int:
        return len(self.trip_lines())

    def wait_state(self, state: str, timeout_s: float) -> None:
        self.spin_until(lambda: self.bridge_state == state, timeout_s,
                        f"hw_bridge did not reach {state} (now {self.bridge_state})")

    def bring_up(self, activate_timeout_s: float = 30.0, ramp_attempts: int = 3) -> None:
        """From ZERO_TORQUE or DAMP to ACTIVE as an operator does: start (ramp to the default pose), HOLD, then
        activate as soon as the policy's commands arrive (a policy still starting is waited for). A ramp the bridge
        damps (limp legs on the gantry swinging past a velocity limit) is started again, ``ramp_attempts`` at most."""
        for attempt in range(1, ramp_attempts + 1):
            for _ in range(10):  # a LowState delayed by a loaded machine, or legs still swinging, refuse a start
                answer = self.call("hw_bridge/start")
                if answer.success or ("no fresh LowState" not in answer.message
                                      and "beyond its limit" not in answer.message):
                    break
                self.spin_for(0.2)
            if not answer.success:
                raise RuntimeError(f"hw_bridge/start refused: {answer.message}")
            damped = self.trips()
            self.spin_until(lambda damped=damped: self.bridge_state == "HOLD" or self.trips() > damped, 10.0,
                            f"hw_bridge did not reach HOLD (now {self.bridge_state})")
            if self.trips() == damped:
                break
            if attempt == ramp_attempts:
                raise RuntimeError(f"hw_bridge damped during the ramp {ramp_attempts} times; the graph's last lines:"
                                   f"\n{self.last_lines()}")
            self.spin_for(2.0)  # (the legs settle)
        deadline = time.monotonic() + activate_timeout_s
        while not (answer := self.call("hw_bridge/activate")).success:
            if "no valid joint_command" not in answer.message:  # (only a policy still starting is waited for)
                raise RuntimeError(f"hw_bridge/activate refused: {answer.message}; the graph's last lines:\n"
                                   f"{self.last_lines()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"hw_bridge did not activate within {activate_timeout_s:g} s: {answer.message}; "
                                   f"the policy's last lines:\n{self.last_lines(node='policy')}")
            self.spin_for(0.2)
        self.wait_state("ACTIVE", 5.0)

    def close(self) -> None:
        self.executor.shutdown()
        self.node.destroy_node()
        self.context.try_shutdown()
