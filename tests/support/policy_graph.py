"""The simulation graph (four nodes as separate processes over DDS, lockstep) with an operator's node in the test:
it hears the policy's gains, commands and modes, calls the mode services, publishes joy and cmd_vel. The
simulation starts once the node hears the policy, so that it hears every command from the first."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np
import rclpy
from geometry_msgs.msg import Twist
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState, Joy
from std_msgs.msg import Empty, String
from std_srvs.srv import Trigger

from g1_teleop.control.gains import JointGains
from g1_teleop.launching.graph_description import load_graph
from g1_teleop.launching.process_runner import GraphProcesses
from g1_teleop.ros.messages import stamp_ns
from g1_teleop.ros.qos import QOS_SENSOR

TICK_NS = 20_000_000  # the control period
RELIABLE_LATCHED = QoSProfile(depth=200, reliability=ReliabilityPolicy.RELIABLE,
                              durability=DurabilityPolicy.TRANSIENT_LOCAL)


@dataclass
class Heard:
    """What the operator's node heard: gains and commands by stamp (ns), the gains' joint names, the modes in
    order, and the nodes' output lines."""

    lines: list[str] = field(default_factory=list)
    gains: dict[int, JointGains] = field(default_factory=dict)
    commands: dict[int, np.ndarray] = field(default_factory=dict)
    names: list[list[str]] = field(default_factory=list)
    modes: list[str] = field(default_factory=list)


class PolicyGraph:
    """The sim graph with ``arguments`` and the operator's node on ``context``'s domain; :meth:`close` stops both."""

    def __init__(self, context, arguments: dict[str, str]) -> None:
        self.heard = Heard()
        self.processes = GraphProcesses(load_graph("sim").resolve({**arguments, "wait_for_start": "true"}),
                                        output=self.heard.lines.append)
        self.processes.start()
        self.node = rclpy.create_node("operator", context=context)
        self.executor = SingleThreadedExecutor(context=context)
        self.executor.add_node(self.node)
        heard = self.heard

        def on_gains(msg: JointState) -> None:
            heard.names.append(list(msg.name))
            heard.gains[stamp_ns(msg.header.stamp)] = JointGains(msg.position, msg.velocity)

        def on_command(msg: JointState) -> None:
            heard.commands[stamp_ns(msg.header.stamp)] = np.array(msg.position)

        self.node.create_subscription(JointState, "teleop/gains", on_gains, RELIABLE_LATCHED)
        self.node.create_subscription(JointState, "joint_command", on_command,
                                      QoSProfile(depth=200, reliability=ReliabilityPolicy.RELIABLE))
        self.node.create_subscription(String, "teleop/mode", lambda m: heard.modes.append(m.data), RELIABLE_LATCHED)
        self.clients = {name: self.node.create_client(Trigger, f"teleop/{name}") for name in ("locomotion", "squat")}
        self.joy = self.node.create_publisher(Joy, "joy", QOS_SENSOR)
        self.cmd_vel = self.node.create_publisher(Twist, "cmd_vel", QOS_SENSOR)
        start = self.node.create_publisher(Empty, "sim/start", RELIABLE_LATCHED)
        self.spin_until(lambda: all(self.node.count_publishers(t) for t in ("joint_command", "teleop/gains", "/clock")))
        self.spin_for(0.5)  # the data paths match
        start.publish(Empty())

    def output(self) -> str:
        return "\n".join(self.heard.lines[-40:])

    def spin_for(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self.executor.spin_once(timeout_sec=0.02)

    def spin_until(self, done: Callable[[], bool], timeout_s: float = 90.0,
                   each: Callable[[], None] | None = None) -> None:
        """Spin (calling ``each`` every turn, e.g. to publish the operator's sticks) until ``done()``; fail with
        the nodes' output after ``timeout_s`` or when a node dies."""
        deadline = time.monotonic() + timeout_s
        while not done():
            assert time.monotonic() < deadline, "timed out:\n" + self.output()
            assert self.processes.check() is None, self.output()
            if each is not None:
                each()
            self.executor.spin_once(timeout_sec=0.02)

    def ticks_later(self, ticks: int) -> Callable[[], bool]:
        """True once a command ``ticks`` control periods after the newest one now is heard."""
        start = max(self.heard.commands, default=0)
        return lambda: max(self.heard.commands, default=0) >= start + ticks * TICK_NS

    def sticks(self, height: float = 0.0, vx: float = 0.0) -> Callable[[], None]:
        """Publishes the joystick (Xbox layout: axis 1 the height in SQUAT, vx in LOCOMOTION) and cmd_vel."""
        def publish() -> None:
            self.joy.publish(Joy(axes=[0.0, height, 0.0, 0.0, 0.0, 0.0], buttons=[0, 0]))
            twist = Twist()
            twist.linear.x = vx
            self.cmd_vel.publish(twist)
        return publish

    def call(self, name: str) -> Trigger.Response:
        """Call teleop/NAME (std_srvs/Trigger) and return the answer."""
        assert self.clients[name].wait_for_service(timeout_sec=60.0), self.output()
        future = self.clients[name].call_async(Trigger.Request())
        self.executor.spin_until_future_complete(future, timeout_sec=20.0)
        assert future.done(), f"teleop/{name} did not answer:\n" + self.output()
        return future.result()

    def close(self) -> None:
        self.processes.stop()
        self.executor.shutdown()
        self.node.destroy_node()


@contextmanager
def policy_graph(context, **arguments: str) -> Iterator[PolicyGraph]:
    """A :class:`PolicyGraph` of the sim graph with launch ``arguments``, closed on exit."""
    graph = PolicyGraph(context, arguments)
    try:
        yield graph
    finally:
        graph.close()
