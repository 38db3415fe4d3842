"""bag_recorder: the graph's topics into a rosbag2 bag (MCAP), for pip environments without `ros2 bag`.

Subscribes to every topic of the topic contract (README) with the reliability and durability its publisher offers,
takes each message's serialized bytes as they came over DDS and writes them with the node clock's time at their
arrival (simulated time with use_sim_time) as log time and the DDS source timestamp (when the publisher wrote it,
system clock) as publish time into a new bag folder (g1_teleop.core.rosbag), as rosbag2 does. The subscriptions are
polled (ros.polled_subscription), emptied every ``DRAIN_PERIOD_S`` in the order the messages arrived: a callback
cannot have the source timestamp on rclpy's EventsExecutor (ros.executor), and the arrival in its place put the
recorder's own wake-ups into every latency measured from a bag (1–3 ms at p50 on 2 busy cores). With use_sim_time
the log time is the simulated time at the message's arrival: the last /clock message that arrived before it (the
clock is recorded too), or, before the first or with /clock not recorded, the node's clock at the drain (which lags
the graph by up to a drain: 3 control periods of a lockstep graph at 6× real time). On the system clock it is the
arrival's. Latched topics
(robot_description, /tf_static, teleop/mode, teleop/gains) are subscribed transient local, so a recorder that joins
late still gets their last message. robot_description is recorded whatever topics are asked for: every bag says
which robot it is of. Used by `g1-teleop record` and by the main job (the run directory's bag/). Topics that never
carry a message are left out of the bag. :meth:`BagRecorder.watch_episodes` tells, as they happen, the episodes the
operator marks with the joy buttons (tools/episode_marks.py; the marks themselves are read back from the bag's joy
when a dataset is exported).
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable
from pathlib import Path

from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import PoseArray, PoseStamped, Twist
from nav_msgs.msg import Odometry
from rclpy.clock import Clock as RclClock
from rclpy.clock import ClockType
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import HistoryPolicy, QoSProfile
from rclpy.serialization import deserialize_message
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import CompressedImage, Imu, JointState, Joy, TimeReference
from std_msgs.msg import Float32, String
from visualization_msgs.msg import MarkerArray

from g1_teleop.core.rosbag import BagWriter
from g1_teleop.ros.image_messages import QOS_IMAGE
from g1_teleop.ros.messages import stamp_ns
from g1_teleop.ros.polled_subscription import PolledSubscription
from g1_teleop.ros.qos import QOS_COMMAND, QOS_LATCHED, QOS_SENSOR, QOS_STATE, QOS_TF, QOS_TF_STATIC
from g1_teleop.ros.tf_messages import TFMessage
from g1_teleop.tools.episode_marks import EpisodeButtons, EpisodeMarks

# The topic contract: each topic with its type and the QoS its publisher offers.
GRAPH_TOPICS: dict[str, tuple[type, QoSProfile]] = {
    "xr/head": (PoseStamped, QOS_SENSOR),
    "xr/left_wrist": (PoseStamped, QOS_SENSOR),
    "xr/right_wrist": (PoseStamped, QOS_SENSOR),
    "xr/left_hand": (PoseArray, QOS_SENSOR),
    "xr/right_hand": (PoseArray, QOS_SENSOR),
    "xr/body": (PoseArray, QOS_SENSOR),
    "joy": (Joy, QOS_SENSOR),
    "cmd_vel": (Twist, QOS_SENSOR),
    "teleop/mode_request": (String, QOS_COMMAND),
    "teleop/squat_height": (Float32, QOS_COMMAND),
    "teleop/heading": (Float32, QOS_COMMAND),
    "teleop/arm_target": (JointState, QOS_COMMAND),
    "teleop/body_configuration": (JointState, QOS_COMMAND),
    "teleop/body_base": (PoseStamped, QOS_COMMAND),
    "teleop/body_links": (PoseArray, QOS_COMMAND),
    "teleop/mode": (String, QOS_LATCHED),
    "teleop/trace": (TimeReference, QOS_COMMAND),
    "teleop/hand_target": (JointState, QOS_COMMAND),
    "joint_command": (JointState, QOS_COMMAND),
    "joint_states": (JointState, QOS_STATE),
    "hand_states": (JointState, QOS_STATE),
    "imu": (Imu, QOS_STATE),
    "odom": (Odometry, QOS_STATE),
    "/clock": (Clock, QOS_STATE),
    "diagnostics": (DiagnosticArray, QOS_STATE),
    "teleop/gains": (JointState, QOS_LATCHED),
    "robot_description": (String, QOS_LATCHED),
    "/tf": (TFMessage, QOS_TF),
    "/tf_static": (TFMessage, QOS_TF_STATIC),
    "teleop/wrist_markers": (MarkerArray, QOS_STATE),
    # the eyes' JPEGs (not the raw images: 0.9 MB each), for datasets (g1-teleop record --dataset)
    "camera/left/image_raw/compressed": (CompressedImage, QOS_IMAGE),
    "camera/right/image_raw/compressed": (CompressedImage, QOS_IMAGE),
}
ALWAYS_RECORDED = "robot_description"  # in every bag, whatever the topics
_DEPTH = 200  # messages kept per topic until a drain takes them: a lockstep graph's bursts
DRAIN_PERIOD_S = 0.01  # how often the subscriptions are emptied into the bag (steady clock, s)


def type_name(msg_class: type) -> str:
    """The ROS 2 name of a message class, e.g. ``sensor_msgs/msg/JointState``."""
    return f"{msg_class.__module__.split('.')[0]}/msg/{msg_class.__name__}"


class BagRecorder(Node):
    """Records ``topics`` (names of GRAPH_TOPICS, relative to the node's namespace) into a new bag at ``path``."""

    def __init__(self, path: str | Path, topics: list[str] | None = None, use_sim_time: bool = False,
                 node_name: str = "bag_recorder", namespace: str = "", context=None) -> None:
        super().__init__(node_name, namespace=namespace, context=context,
                         parameter_overrides=[Parameter("use_sim_time", value=use_sim_time)])
        unknown = sorted(set(topics or ()) - set(GRAPH_TOPICS))
        if unknown:
            raise ValueError(f"not topics of the graph: {unknown}; known: {sorted(GRAPH_TOPICS)}")
        self.writer = BagWriter(path)
        self.sim_time, self._log_ns = use_sim_time, 0
        self._clock_topic, self._clock_ns = self.resolve_topic_name("/clock"), None  # the last /clock arrived (ns)
        # the subscriptions' node, in no executor; the process's arguments (remappings) are the recorder's only
        self._reader = Node(f"_{node_name}_taken", namespace=namespace, context=context, use_global_arguments=False,
                            start_parameter_services=False, enable_rosout=False)
        self._taken: list[tuple[PolledSubscription[bytes], str, str]] = []  # (subscription, topic as recorded, type)
        for topic in dict.fromkeys([*(topics or GRAPH_TOPICS), ALWAYS_RECORDED]):
            msg_class, offered = GRAPH_TOPICS[topic]
            qos = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=_DEPTH, reliability=offered.reliability,
                             durability=offered.durability)
            resolved = self.resolve_topic_name(topic)  # fully qualified, as `ros2 bag` records it
            self._taken.append((PolledSubscription(self._reader, msg_class, resolved, qos, depth=_DEPTH, raw=True),
                                resolved, type_name(msg_class)))
        self.create_timer(DRAIN_PERIOD_S, self.drain, clock=RclClock(clock_type=ClockType.STEADY_TIME))

    def drain(self) -> None:
        """Write the messages received since the last drain: each topic's in the order DDS gives them, the topics
        merged by reception time (a reliable topic's resent message arrives after later ones); on the system clock
        the log times never go back, on a simulated one they follow /clock as it arrived (back too: a restart)."""
        now_ns, wall_ns = self.get_clock().now().nanoseconds, time.time_ns()
        per_topic = [[(info["received_timestamp"] or wall_ns, info["source_timestamp"], topic, msgtype, data)
                      for data, info in subscription.take_all()] for subscription, topic, msgtype in self._taken]
        for arrival_ns, source_ns, topic, msgtype, data in heapq.merge(*per_topic, key=lambda one: one[0]):
            if not self.sim_time:
                self._log_ns = max(self._log_ns, arrival_ns)
            else:
                if topic == self._clock_topic and (clock_ns := stamp_ns(deserialize_message(data, Clock).clock)) >= 0:
                    self._clock_ns = clock_ns  # (a negative time, which any node can publish, is not a log time)
                self._log_ns = now_ns if self._clock_ns is None else self._clock_ns
            self.writer.write(topic, msgtype, self._log_ns, data, source_ns or arrival_ns)

    def watch_episodes(self, buttons: EpisodeButtons, tell: Callable[[str], None]) -> None:
        """Call ``tell(event)`` with each episode event (``"episode 2 started"`` …) the joy buttons make."""
        marks = EpisodeMarks(buttons)

        def on_joy(msg: Joy) -> None:
            if (event := marks.press(stamp_ns(msg.header.stamp), msg.buttons, msg.header.frame_id)) is not None:
                tell(event)

        self.create_subscription(Joy, "joy", on_joy, QOS_SENSOR)

    def close(self) -> dict[str, int]:
        """Write what is left, finish the bag; returns the messages written per topic (fully qualified names)."""
        self.drain()
        self._taken.clear()
        self._reader.destroy_node()
        self.writer.close()
        return dict(self.writer.counts)
