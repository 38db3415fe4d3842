"""The Dex3 hands' part of hw_bridge (``dex3:=true``): teleop/hand_target → rt/dex3/{left,right}/cmd,
rt/dex3/{left,right}/state → hand_states, each hand through :class:`g1_teleop.dex3.HandSafety`.

ROS side: teleop/hand_target (sensor_msgs/JointState, the 7 joints of one hand or the 14 of both, named
as in config/dex3.yaml: ``left_hand_thumb_0_joint`` …; a message naming only part of a hand, an unknown
joint or a non-finite value is rejected with one warning per kind); hand_states (sensor_msgs/JointState
of one hand: q, dq, tau_est) at ``rate_hz`` on average per hand. Robot side: HandCmd_ / HandState_
through unitree_sdk2py on the bridge's CycloneDDS participant; commands are written by the bridge's
LowCmd loop (:meth:`HandBridge.tick`) at ``rate_hz``.
"""

from __future__ import annotations

import collections
import time

import numpy as np
from rclpy.node import Node
from sensor_msgs.msg import JointState

from g1_teleop.bridge_safety import SafetyState
from g1_teleop.dex3 import (
    NUM_HAND_MOTORS,
    SIDES,
    Dex3,
    HandSafety,
    HandSample,
    HandTarget,
    hand_cmd_message,
    hand_state_arrays,
)
from g1_teleop.joint_vector import JointIndex, MalformedJointMessage
from g1_teleop.nodes.common import QOS_COMMAND, QOS_STATE, WarnOnce


class HandBridge:
    def __init__(self, node: Node, participant, dex3: Dex3, rate_hz: float, warn: WarnOnce) -> None:
        from cyclonedds.core import Listener
        from cyclonedds.internal import InvalidSample
        from cyclonedds.pub import DataWriter
        from cyclonedds.sub import DataReader
        from cyclonedds.topic import Topic
        from unitree_sdk2py.idl.unitree_hg.msg.dds_ import HandCmd_, HandState_

        self.node, self.warn = node, warn
        self._invalid = InvalidSample
        self.names = {side: list(dex3.joint_names(side)) for side in SIDES}
        self.index = JointIndex(self.names["left"] + self.names["right"])
        self.safety = {side: HandSafety(dex3, side) for side in SIDES}
        self.counts = collections.Counter[str]()
        self.period_s = 1.0 / rate_hz
        self._next_tick_s = 0.0
        self._next_publish_s = dict.fromkeys(SIDES, 0.0)
        # Shared between threads, replaced whole: the latest HandState and target of each hand.
        self._states: dict[str, HandSample | None] = dict.fromkeys(SIDES)
        self._targets: dict[str, HandTarget | None] = dict.fromkeys(SIDES)
        self.publisher = node.create_publisher(JointState, "hand_states", QOS_STATE)
        node.create_subscription(JointState, "teleop/hand_target", self.on_target, QOS_COMMAND)
        p = participant
        self._writers = {side: DataWriter(p, Topic(p, f"rt/dex3/{side}/cmd", HandCmd_)) for side in SIDES}
        self._readers = {side: DataReader(p, Topic(p, f"rt/dex3/{side}/state", HandState_), listener=Listener(
            on_data_available=lambda reader, side=side: self.on_state(side, reader))) for side in SIDES}

    # -- ROS (executor thread) ---------------------------------------------------------------------
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
        for offset, side in enumerate(SIDES):
            if side in given:
                q = vec.position[offset * NUM_HAND_MOTORS:(offset + 1) * NUM_HAND_MOTORS]
                self._targets[side] = HandTarget(received_s, q.copy())
        self.counts["hand_targets_received"] += 1

    # -- robot (CycloneDDS listener thread) ---------------------------------------------------------
    def on_state(self, side: str, reader) -> None:
        received_s = time.monotonic()
        samples = [s for s in reader.take(8) if not isinstance(s, self._invalid)]  # (a writer went away)
        if not samples:
            return
        try:
            q, dq, tau = hand_state_arrays(samples[-1])
        except ValueError as exc:
            self.warn("hand_state", f"dropped rt/dex3/{side}/state: {exc}")
            return
        if not (np.isfinite(q).all() and np.isfinite(dq).all()):
            self.warn("hand_state_nan", f"dropped rt/dex3/{side}/state: non-finite q or dq")
            return
        self._states[side] = HandSample(received_s, q, dq)
        if received_s >= self._next_publish_s[side] and self.node.context.ok():
            self._next_publish_s[side] = max(self._next_publish_s[side] + self.period_s, received_s - self.period_s)
            msg = JointState(name=self.names[side], position=q.tolist(), velocity=dq.tolist(), effort=tau.tolist())
            msg.header.stamp = self.node.get_clock().now().to_msg()
            self.publisher.publish(msg)

    # -- LowCmd loop thread ------------------------------------------------------------------------
    def tick(self, now_s: float, body: SafetyState) -> None:
        """Write both hands' commands if a hand period has passed (called every LowCmd tick)."""
        if now_s < self._next_tick_s:
            return
        self._next_tick_s = max(self._next_tick_s + self.period_s, now_s - self.period_s)
        for side in SIDES:
            command = self.safety[side].step(now_s, body, self._states[side], self._targets[side])
            if command is not None:
                self._writers[side].write(hand_cmd_message(command))
                self.counts["handcmd_written"] += 1

    def close(self) -> None:
        for reader in self._readers.values():
            reader.set_listener(None)
        del self._readers, self._writers
