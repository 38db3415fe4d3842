"""The graph on a Foxglove WebSocket server, for pip environments (foxglove_bridge's job on a ROS distribution).

Every topic of the graph is relayed as it is on the wire: CDR bytes, with the ROS 2 message definitions as
schemas (encoding ``ros2msg``, from rosbags' Kilted type store), so Foxglove (app or browser) draws the robot
from robot_description and /tf, the wrist markers, and plots joint states like a ROS 2 bag. New topics are
picked up every second, with a QoS matching their publishers. Latched topics (robot_description,
/tf_static, teleop/mode) are sent again to each client that subscribes later, as foxglove_bridge does.
``--use-sim-time`` logs on the graph's /clock and sends that time to clients (the simulation graph does).

    python -m g1_teleop.tools.foxglove_bridge [--host 127.0.0.1] [--port 8765] [--namespace /g1] [--use-sim-time]

The graph argument ``foxglove:=true`` starts it. Connect Foxglove to ws://localhost:8765 and open
config/foxglove/g1_teleop.json.
"""

from __future__ import annotations

import argparse
import sys
import threading
from collections.abc import Sequence

import foxglove
import rclpy
from foxglove.websocket import Capability, ChannelView, Client
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy

import g1_teleop.ros.tf_messages  # noqa: F401  (tf2_msgs importable: built where the wheels lack it)
from g1_teleop.core.process_lifetime import stop_with_runner
from g1_teleop.core.rosbag import TYPESTORE
from g1_teleop.tools.graph_topics import matching_qos, message_class

DISCOVERY_PERIOD_S = 1.0
TIME_PERIOD_S = 0.05  # how often clients get the graph's time (--use-sim-time)


class _Relay:
    """One topic: a raw subscription and its Foxglove channel; the last message if the topic is latched."""

    def __init__(self, node: Node, name: str, type_name: str, qos) -> None:
        schema, _ = TYPESTORE.generate_msgdef(type_name, ros_version=2)
        self.channel = foxglove.Channel(name, message_encoding="cdr", schema=foxglove.Schema(
            name=type_name, encoding="ros2msg", data=schema.encode()))
        self.latched = qos.durability == DurabilityPolicy.TRANSIENT_LOCAL
        self.last: tuple[bytes, int] | None = None
        self._clock = node.get_clock()
        node.create_subscription(message_class(type_name), name, self.on_message, qos, raw=True)

    def on_message(self, data: bytes) -> None:
        log_time = self._clock.now().nanoseconds
        self.channel.log(data, log_time=log_time)
        if self.latched:
            self.last = (data, log_time)


class FoxgloveBridge(Node):
    """Discovers the graph's topics and relays them (see the module docstring)."""

    def __init__(self, use_sim_time: bool) -> None:
        super().__init__("foxglove_bridge", parameter_overrides=[Parameter("use_sim_time", value=use_sim_time)])
        self.relays: dict[str, _Relay] = {}
        self.skipped: set[str] = set()
        self._resend: set[int] = set()  # channel ids a client subscribed to since the last tick
        self._lock = threading.Lock()
        self.create_timer(DISCOVERY_PERIOD_S, self.discover)
        self.create_timer(TIME_PERIOD_S, self.tick)
        self.server: foxglove.WebSocketServer | None = None
        self.use_sim_time = use_sim_time

    def discover(self) -> None:
        for name, types in self.get_topic_names_and_types():
            if name in self.relays or name in self.skipped:
                continue
            publishers = self.get_publishers_info_by_topic(name)
            if not publishers:
                continue
            if len(types) != 1 or types[0] not in TYPESTORE.fielddefs:
                self.skipped.add(name)
                self.get_logger().warning(f"{name} {types}: not relayed (one type with a known definition needed)")
                continue
            qos = matching_qos(publishers, depth=10)
            try:
                self.relays[name] = _Relay(self, name, types[0], qos)
            except ValueError as exc:  # its Python message package is not installed
                self.skipped.add(name)
                self.get_logger().warning(f"{name}: not relayed: {exc}")
                continue
            self.get_logger().info(f"relaying {name} ({types[0]}, {qos.reliability.name.lower()}, "
                                   f"{qos.durability.name.lower()}; {len(publishers)} publisher(s))")

    def on_subscribe(self, _client: Client, channel: ChannelView) -> None:
        """(Server thread.) A latched topic's last message goes again to a client that subscribes later."""
        with self._lock:
            self._resend.add(channel.id)

    def tick(self) -> None:
        with self._lock:
            resend, self._resend = self._resend, set()
        for relay in self.relays.values():
            if relay.channel.id() in resend and relay.last is not None:
                relay.channel.log(relay.last[0], log_time=relay.last[1])
        if self.use_sim_time and self.server is not None:
            self.server.broadcast_time(self.get_clock().now().nanoseconds)


class _Listener(foxglove.websocket.ServerListener):
    def __init__(self, bridge: FoxgloveBridge) -> None:
        self.bridge = bridge

    def on_subscribe(self, client: Client, channel: ChannelView) -> None:
        self.bridge.on_subscribe(client, channel)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m g1_teleop.tools.foxglove_bridge", description=__doc__.split(
        "\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1", help="address to serve on (0.0.0.0: every interface)")
    parser.add_argument("--port", type=int, default=8765, help="WebSocket port (Foxglove's default 8765)")
    parser.add_argument("--namespace", default="", help="the graph's namespace, e.g. /g1")
    parser.add_argument("--use-sim-time", action="store_true", help="log on the graph's /clock")
    args = parser.parse_args(argv)
    stop_with_runner()
    rclpy.init(args=["--ros-args", "-r", f"__ns:={args.namespace}"] if args.namespace else None)
    bridge = FoxgloveBridge(args.use_sim_time)
    try:
        bridge.server = foxglove.start_server(name="g1_teleop", host=args.host, port=args.port,
                                              capabilities=[Capability.Time] if args.use_sim_time else [],
                                              server_listener=_Listener(bridge))
    except RuntimeError as exc:
        print(f"foxglove_bridge: cannot serve on {args.host}:{args.port}: {exc} (another server on that port? "
              "give --port)", file=sys.stderr)
        sys.exit(2)
    bridge.get_logger().info(f"Foxglove WebSocket server on ws://{args.host}:{bridge.server.port}: open "
                             "config/foxglove/g1_teleop.json in Foxglove")
    executor = SingleThreadedExecutor()
    executor.add_node(bridge)
    try:
        executor.spin()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        bridge.server.stop()
        executor.shutdown()
        bridge.destroy_node()
        if rclpy.ok():
            rclpy.shutdown()


if __name__ == "__main__":
    main()
