"""The Dex3 hands' ROS side in hw_bridge (``dex3:=true``): teleop/hand_target → the LowCmd process,
which writes rt/dex3/{left,right}/cmd through each hand's :class:`g1_teleop.hardware.dex3.HandSafety`
(:class:`g1_teleop.hardware.dex3_dds.HandDds`); the hands' states it forwards → hand_states.

teleop/hand_target: sensor_msgs/JointState, the 7 joints of one hand or the 14 of both, named as in
config/dex3.yaml (``left_hand_thumb_0_joint`` …); a message naming only part of a hand, an unknown joint or
a non-finite value is rejected with one warning per kind. hand_states: sensor_msgs/JointState of one hand
(q, dq, tau_est), at the bridge's ``dex3_rate_hz`` on average per hand.
"""

from __future__ import annotations

import collections
import time
from collections.abc import Callable

from rclpy.node import Node
from sensor_msgs.msg import JointState

from g1_teleop.core.dex3_description import NUM_HAND_MOTORS, SIDES, Dex3
from g1_teleop.core.joint_vector import JointIndex, MalformedJointMessage
from g1_teleop.hardware.bridge_link import HandCommand, HandState
from g1_teleop.hardware.dex3 import HandTarget
from g1_teleop.ros.diagnostics import WarnOnce
from g1_teleop.ros.qos import QOS_COMMAND, QOS_STATE


class HandTopics:
    """Subscribes teleop/hand_target (valid targets go to ``send``), publishes hand_states."""

    def __init__(self, node: Node, dex3: Dex3, send: Callable[[HandCommand], None], warn: WarnOnce) -> None:
        self.node, self.send, self.warn = node, send, warn
        self.names = {side: list(dex3.joint_names(side)) for side in SIDES}
        self.index = JointIndex(self.names["left"] + self.names["right"])
        self._hand = {side: [self.index.names.index(name) for name in self.names[side]] for side in SIDES}
        self.counts = collections.Counter[str]()
        self.publisher = node.create_publisher(JointState, "hand_states", QOS_STATE)
        node.create_subscription(JointState, "teleop/hand_target", self.on_target, QOS_COMMAND)

    def on_target(self, msg: JointState) -> None:
        received_s = time.monotonic()
        try:
            vec = self.index.parse(msg.name, msg.position, require_all=False)
            given = [side for side in SIDES if any(name in self.names[side] for name in msg.name)]
            partial = [side for side in given if any(name not in msg.name for name in self.names[side])]
            if partial:
                raise MalformedJointMessage("hand_partial", f"names part of the {partial[0]} hand: a hand's "
                                                            f"{NUM_HAND_MOTORS} joints come together")
        except MalformedJointMessage as exc:
            self.counts["hand_targets_rejected"] += 1
            self.warn(f"hand_{exc.kind}", f"rejected teleop/hand_target: {exc}; it does not reach the hands")
            return
        for side in given:
            self.send(HandCommand(side, HandTarget(received_s, vec.position[self._hand[side]])))
        self.counts["hand_targets_received"] += 1

    def publish(self, state: HandState) -> None:
        """One hand's state, from the LowCmd process (the link's reader thread)."""
        msg = JointState(name=self.names[state.side], position=state.q.tolist(), velocity=state.dq.tolist(),
                         effort=state.tau.tolist())
        msg.header.stamp = self.node.get_clock().now().to_msg()
        self.publisher.publish(msg)
