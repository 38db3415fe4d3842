"""xr_input's publishers: one operator sample's topics, published in the order the graph needs them.

Real time: the head and the wrists first, then joy, the hand landmarks and the body. The IK waits for the wrists
(retarget solves on a wrist pair, with the newest head: so the head just before them), and each message built and
published before them would add to the operator → arm target latency (two 25-landmark hands cost most). Lockstep:
the others first, then the head and the wrists: the policy ticks once the wrists' (or the body's) arm target of the
period is in, and must have that sample's joy by then. The messages: ``ros.operator_messages``.
"""

from __future__ import annotations

import numpy as np
from builtin_interfaces.msg import Time
from geometry_msgs.msg import Pose, PoseArray, PoseStamped
from rclpy.node import Node
from sensor_msgs.msg import Joy

from g1_teleop.operator.input_sources import XrFrame
from g1_teleop.operator.webxr_events import HAND_JOINTS
from g1_teleop.operator.webxr_source import Publication
from g1_teleop.ros.messages import joy_msg
from g1_teleop.ros.operator_messages import HAND_FRAMES, body_msg, landmarks_msg, pose_msg
from g1_teleop.ros.qos import QOS_SENSOR


class OperatorTopics:
    """xr/head, xr/left_wrist, xr/right_wrist, joy, xr/body and, with ``hands``, xr/left_hand and xr/right_hand."""

    def __init__(self, node: Node, lockstep: bool, hands: bool) -> None:
        self.lockstep = lockstep
        self.head = node.create_publisher(PoseStamped, "xr/head", QOS_SENSOR)
        self.left = node.create_publisher(PoseStamped, "xr/left_wrist", QOS_SENSOR)
        self.right = node.create_publisher(PoseStamped, "xr/right_wrist", QOS_SENSOR)
        self.joy = node.create_publisher(Joy, "joy", QOS_SENSOR)
        self.body = node.create_publisher(PoseArray, "xr/body", QOS_SENSOR)  # (source body, pico)
        self.hands = {side: (node.create_publisher(PoseArray, f"xr/{side}_hand", QOS_SENSOR),
                             PoseArray(poses=[Pose() for _ in HAND_JOINTS])) for side in ("left", "right")} \
            if hands else {}

    def publish_frame(self, frame: XrFrame, stamp: Time) -> None:
        """A player's sample (scenario, bag, body stream): joy when it has one, the head (in the operator's world
        with a body), the body, the wrists when both are given."""
        self._publish(frame, stamp, head_frame="operator_world" if frame.body is not None else "xr_world",
                      joy_frame="" if frame.joy_axes or frame.joy_buttons else None, body=frame.body)

    def publish_headset(self, out: Publication, body: np.ndarray | None, stamp: Time) -> None:
        """A headset's sample (webxr_source.publication): the Joy reading, the head and the hands when tracked (the
        hands only for a listener: 25 poses each), the wrists when the head and both wrists are, PICO's body."""
        self._publish(out.frame, stamp, head_frame="xr_world", joy_frame=out.joy_frame, body=body, head=out.head,
                      wrists=out.wrists, hands=(out.left_hand, out.right_hand))

    def _publish(self, frame: XrFrame, stamp: Time, *, head_frame: str, joy_frame: str | None,
                 body: np.ndarray | None, head: bool = True, wrists: bool = True,
                 hands: tuple[np.ndarray | None, np.ndarray | None] = (None, None)) -> None:
        """``joy_frame`` None: no joy; ``wrists``: when both are given."""
        left, right = frame.left_wrist, frame.right_wrist

        def poses() -> None:
            if head:
                self.head.publish(pose_msg(frame.head, stamp, head_frame))
            if wrists and left is not None and right is not None:
                self.left.publish(pose_msg(left, stamp, "pelvis"))
                self.right.publish(pose_msg(right, stamp, "pelvis"))

        def others() -> None:
            if joy_frame is not None:
                self.joy.publish(joy_msg(frame.joy_axes, frame.joy_buttons, stamp, joy_frame))
            for side, points in zip(("left", "right"), hands, strict=True):
                if points is not None and self.hands[side][0].get_subscription_count():
                    publisher, msg = self.hands[side]
                    publisher.publish(landmarks_msg(points, stamp, HAND_FRAMES[side], msg))
            if body is not None:
                self.body.publish(body_msg(body, stamp))

        for publish in (others, poses) if self.lockstep else (poses, others):
            publish()
