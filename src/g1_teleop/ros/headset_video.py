"""The robot's camera frames into the headset's server (xr_input, source webxr): each eye's JPEG of a camera
(``{camera}/{left,right}/image_raw/compressed``, image_transport's names, the eyes node's), paired by stamp and
handed over as they came, or one side-by-side JPEG topic, split by the server (operator.webxr_video)."""

from __future__ import annotations

from rclpy.node import Node
from sensor_msgs.msg import CompressedImage

from g1_teleop.core.camera_images import SIDES
from g1_teleop.operator.webxr_server import WebXrServer
from g1_teleop.operator.webxr_video import EyePairs
from g1_teleop.ros.image_messages import QOS_IMAGE, image_topics
from g1_teleop.ros.messages import stamp_ns


class HeadsetVideo:
    """``node``'s subscriptions that feed ``server``: ``stereo_topic`` if given, else ``camera``'s eyes (neither:
    no video); ``description`` says from where."""

    def __init__(self, node: Node, server: WebXrServer, camera: str, stereo_topic: str) -> None:
        self.server, self.pairs = server, None
        if stereo_topic:
            node.create_subscription(CompressedImage, stereo_topic, lambda m: server.put_frame(
                bytes(m.data), stamp_ns(m.header.stamp)), QOS_IMAGE)
            self.description = f"{stereo_topic} (side by side)"
            return
        if not camera:
            self.description = "none"
            return
        self.pairs = EyePairs()
        topics = [node.resolve_topic_name(image_topics(side, camera)["compressed"]) for side in SIDES]
        for side, topic in zip(SIDES, topics, strict=True):
            node.create_subscription(CompressedImage, topic, lambda m, side=side: self.on_eye(side, m), QOS_IMAGE)
        self.description = " and ".join(topics)

    def on_eye(self, side: str, msg: CompressedImage) -> None:
        assert self.pairs is not None
        if (pair := self.pairs.put(side, stamp_ns(msg.header.stamp), bytes(msg.data))) is not None:
            self.server.put_eyes(*pair)

    def figures(self) -> dict[str, int]:
        """For diagnostics: eye JPEGs replaced before their pair came."""
        return {} if self.pairs is None else {"video_eyes_unpaired": self.pairs.unpaired}
