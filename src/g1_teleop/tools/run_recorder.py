"""recorder: collects what a run needs for its summary and plots into a Recording.

Used in-process by `g1-teleop sim` and by the launch_testing test. Each stream keeps one sample per
stamp (lockstep re-publications are dropped).
"""

from __future__ import annotations

import numpy as np
from geometry_msgs.msg import PoseStamped
from nav_msgs.msg import Odometry
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState, TimeReference
from std_msgs.msg import Empty

from g1_teleop.core.joint_vector import JointIndex, MalformedJointMessage
from g1_teleop.core.robot_description import ARM_INDICES
from g1_teleop.ros.messages import stamp_ns
from g1_teleop.ros.qos import QOS_OBSERVER
from g1_teleop.tools.run_recording import Recording, RecordingBuffer

_BEST_EFFORT = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=200, reliability=ReliabilityPolicy.BEST_EFFORT)


class Recorder(Node):
    def __init__(self, joint_names: tuple[str, ...], node_name: str = "recorder", context=None,
                 wrists: bool = True) -> None:
        """``wrists``: record xr/*_wrist (and wait for their publishers); False for a source without wrist targets
        (a body stream)."""
        super().__init__(node_name, context=context)
        self.joints = JointIndex(joint_names)
        self.buffer = RecordingBuffer()
        self.sim_time_s = 0.0
        self._last: dict[str, int] = {}
        self._start = self.create_publisher(Empty, "sim/start", QoSProfile(
            history=HistoryPolicy.KEEP_LAST, depth=1, reliability=ReliabilityPolicy.RELIABLE,
            durability=DurabilityPolicy.TRANSIENT_LOCAL))
        self._wrists: dict[int, dict[str, tuple[float, float, float]]] = {}
        self.create_subscription(JointState, "joint_states", self.on_state, QOS_OBSERVER)
        self.create_subscription(JointState, "joint_command", self.on_command, QOS_OBSERVER)
        self.create_subscription(JointState, "teleop/arm_target", self.on_arm_target, QOS_OBSERVER)
        self.create_subscription(Odometry, "odom", self.on_odom, QOS_OBSERVER)
        self.create_subscription(TimeReference, "teleop/trace", self.on_trace, QOS_OBSERVER)
        for side in ("left", "right") if wrists else ():
            self.create_subscription(PoseStamped, f"xr/{side}_wrist",
                                     lambda msg, side=side: self.on_wrist(side, msg), _BEST_EFFORT)

    def publishers_missing(self) -> list[str]:
        """Recorded topics that no publisher offers yet."""
        return [sub.topic_name for sub in self.subscriptions if self.count_publishers(sub.topic_name) == 0]

    def last_stamp_s(self, stream: str) -> float:
        """The newest stamp (s) recorded of ``stream`` ("state", "command", "arm_target", …); -inf before any."""
        return self._last[stream] / 1e9 if stream in self._last else float("-inf")

    def start_simulation(self) -> None:
        """Release a simulator that waits for sim/start (sim_bridge wait_for_start)."""
        self._start.publish(Empty())

    def _new(self, stream: str, stamp: int) -> bool:
        if stamp <= self._last.get(stream, -1):
            return False
        self._last[stream] = stamp
        return True

    def on_state(self, msg: JointState) -> None:
        stamp = stamp_ns(msg.header.stamp)
        try:
            vec = self.joints.parse(msg.name, msg.position, msg.velocity, need_velocity=True)
        except MalformedJointMessage:
            return
        if self._new("state", stamp):
            self.buffer.add(state_t=stamp / 1e9, state_q=vec.position, state_dq=vec.velocity)
            self.sim_time_s = stamp / 1e9  # time of the newest recorded state

    def on_command(self, msg: JointState) -> None:
        stamp = stamp_ns(msg.header.stamp)
        try:
            vec = self.joints.parse(msg.name, msg.position, msg.velocity, msg.effort)
        except MalformedJointMessage:
            return
        if self._new("command", stamp):
            tau = vec.effort if vec.effort is not None else 0.0 * vec.position
            self.buffer.add(command_t=stamp / 1e9, command_q=vec.position, command_tau=tau)

    def on_arm_target(self, msg: JointState) -> None:
        stamp = stamp_ns(msg.header.stamp)
        try:
            q_arm = self.joints.parse(msg.name, msg.position, require_all=False).position[ARM_INDICES]
        except MalformedJointMessage:
            return
        if not np.isnan(q_arm).any() and self._new("arm_target", stamp):  # (the waist may come too)
            self.buffer.add(arm_target_t=stamp / 1e9, arm_target_q=q_arm)

    def on_odom(self, msg: Odometry) -> None:
        stamp = stamp_ns(msg.header.stamp)
        if self._new("odom", stamp):
            p, o = msg.pose.pose.position, msg.pose.pose.orientation
            self.buffer.add(odom_t=stamp / 1e9, odom_p=(p.x, p.y, p.z), odom_q=(o.w, o.x, o.y, o.z))

    def on_trace(self, msg: TimeReference) -> None:
        stamp = stamp_ns(msg.header.stamp)
        if self._new("trace", stamp):
            self.buffer.add(trace_t=stamp / 1e9, trace_origin_t=stamp_ns(msg.time_ref) / 1e9)

    def on_wrist(self, side: str, msg: PoseStamped) -> None:
        stamp = stamp_ns(msg.header.stamp)
        p = msg.pose.position
        pair = self._wrists.setdefault(stamp, {})
        pair[side] = (p.x, p.y, p.z)
        if len(pair) == 2:
            del self._wrists[stamp]
            if self._new("wrist", stamp):
                self.buffer.add(wrist_t=stamp / 1e9, wrist_left=pair["left"], wrist_right=pair["right"])
        for old in [s for s in self._wrists if s < stamp - 1_000_000_000]:
            del self._wrists[old]

    def recording(self) -> Recording:
        return self.buffer.freeze()
