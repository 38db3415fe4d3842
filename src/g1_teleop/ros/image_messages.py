"""The eyes' messages: sensor_msgs/Image (rgb8), sensor_msgs/CompressedImage (JPEG) and sensor_msgs/CameraInfo, and
the optical frames they are expressed in (``left_eye_optical``, ``right_eye_optical`` on /tf_static).

Topics (relative): ``camera/{left,right}/image_raw``, ``camera/{left,right}/image_raw/compressed`` (image_transport's
names), ``camera/{left,right}/camera_info``, and ``camera/stereo/image_raw/compressed``: left | right side by side.
The TF frames ``left_eye``/``right_eye`` are the model's camera frames (MuJoCo/OpenGL: looking along −z, image-up
+y); ROS images live in optical frames (z forward, x right, y down), so each eye gets ``<eye>_optical``, its camera
frame turned 180° about x.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from builtin_interfaces.msg import Time
from rclpy.node import Node
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import CameraInfo, CompressedImage, Image

from g1_teleop.core.camera_images import OPTICAL_R_CAMERA, SIDES, StereoFrame
from g1_teleop.ros.messages import to_stamp
from g1_teleop.ros.qos import QOS_TF_STATIC
from g1_teleop.ros.tf_messages import TFMessage, tf_message

# Reliable, newest wins: a reliable 0.9 MB rgb8 Image reached another process 240 of 240 times at 30 Hz, best effort
# 2 of 240 (Fast DDS's default transports; 27 of 240 with LARGE_DATA). Best-effort subscribers still match.
QOS_IMAGE = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1, reliability=ReliabilityPolicy.RELIABLE)
STEREO_TOPIC = "camera/stereo/image_raw/compressed"
# compressed_image_transport's format for an rgb8 image coded as JPEG (decoders read it as bgr8)
JPEG_FORMAT = "rgb8; jpeg compressed bgr8"
MESSAGE_TYPES = {"raw": Image, "compressed": CompressedImage, "info": CameraInfo}  # an eye's topics by kind


def image_topics(side: str, camera: str = "camera") -> dict[str, str]:
    """The topics of one eye (``left`` or ``right``) of ``camera`` (a namespace): raw, compressed, camera_info."""
    return {"raw": f"{camera}/{side}/image_raw", "compressed": f"{camera}/{side}/image_raw/compressed",
            "info": f"{camera}/{side}/camera_info"}


def optical_frame(camera_frame: str) -> str:
    """The optical frame of a camera frame: ``left_eye`` → ``left_eye_optical``."""
    return f"{camera_frame}_optical"


def camera_T_optical() -> np.ndarray:
    """The optical frame in the MuJoCo camera frame (4×4): 180° about x."""
    T = np.eye(4)
    T[:3, :3] = OPTICAL_R_CAMERA.T
    return T


def optical_transforms(camera_frames: list[str]) -> list[tuple[str, str, np.ndarray]]:
    """(camera frame, its optical frame, camera_T_optical) of each camera frame: /tf_static's transforms."""
    return [(frame, optical_frame(frame), camera_T_optical()) for frame in camera_frames]


def image_msg(rgb: np.ndarray, stamp: Time, frame_id: str) -> Image:
    """sensor_msgs/Image, rgb8, of an RGB image (height, width, 3) uint8."""
    height, width = rgb.shape[:2]
    msg = Image(height=height, width=width, encoding="rgb8", is_bigendian=0, step=3 * width,
                data=np.ascontiguousarray(rgb, dtype=np.uint8).tobytes())
    msg.header.stamp, msg.header.frame_id = stamp, frame_id
    return msg


def compressed_msg(jpeg: bytes, stamp: Time, frame_id: str) -> CompressedImage:
    """sensor_msgs/CompressedImage of JPEG bytes (format as compressed_image_transport writes it)."""
    msg = CompressedImage(format=JPEG_FORMAT, data=jpeg)
    msg.header.stamp, msg.header.frame_id = stamp, frame_id
    return msg


def camera_info_msg(K: np.ndarray, width: int, height: int, stamp: Time, frame_id: str,
                    baseline_m: float = 0.0) -> CameraInfo:
    """sensor_msgs/CameraInfo of an undistorted pinhole camera: K (3×3, pixels), no distortion (plumb_bob, zeros),
    R = I, P = [K | (−fx·baseline, 0, 0)ᵀ]: a stereo pair's right camera has baseline_m > 0 (m, along the left
    camera's x), as ROS's stereo convention asks."""
    msg = CameraInfo(height=height, width=width, distortion_model="plumb_bob", d=[0.0] * 5,
                     k=[float(v) for v in K.ravel()], r=[float(v) for v in np.eye(3).ravel()])
    P = np.zeros((3, 4))
    P[:, :3] = K
    P[0, 3] = -K[0, 0] * baseline_m
    msg.p = [float(v) for v in P.ravel()]
    msg.header.stamp, msg.header.frame_id = stamp, frame_id
    return msg


class EyePublishers:
    """The eyes' topics on ``node``, and their optical frames on /tf_static (``camera_frames``: the TF frame of each
    side's camera, e.g. ``left_eye``). A frame is published in the forms someone subscribes to (the others are never
    made: a StereoFrame codes on first use), with both camera_info always."""

    def __init__(self, node: Node, camera_frames: Mapping[str, str], baseline_m: float) -> None:
        self.frame_ids = {side: optical_frame(camera_frames[side]) for side in SIDES}
        self.baseline_m = baseline_m
        self.pubs = {side: {kind: node.create_publisher(MESSAGE_TYPES[kind], topic, QOS_IMAGE)
                            for kind, topic in image_topics(side).items()} for side in SIDES}
        self.stereo = node.create_publisher(CompressedImage, STEREO_TOPIC, QOS_IMAGE)
        self.static = node.create_publisher(TFMessage, "/tf_static", QOS_TF_STATIC)
        self.static.publish(tf_message(optical_transforms([camera_frames[s] for s in SIDES]),
                                       node.get_clock().now().to_msg()))
        self.published = 0

    def subscribed(self) -> bool:
        """Someone subscribes to an image topic (camera_info alone needs no image)."""
        return bool(self.stereo.get_subscription_count()) or any(
            pubs[kind].get_subscription_count() for pubs in self.pubs.values() for kind in ("raw", "compressed"))

    def publish(self, frame: StereoFrame, stamp_ns: int, K: Mapping[str, np.ndarray]) -> None:
        """The subscribed forms of ``frame`` and both camera_info (``K``: each eye's intrinsics), stamped
        ``stamp_ns``; the stereo frame in the left eye's optical frame."""
        stamp = to_stamp(stamp_ns)
        height, width = frame.shape
        for side in SIDES:
            pubs, frame_id = self.pubs[side], self.frame_ids[side]
            if pubs["raw"].get_subscription_count():
                pubs["raw"].publish(image_msg(frame.rgb(side), stamp, frame_id))
            if pubs["compressed"].get_subscription_count():
                pubs["compressed"].publish(compressed_msg(frame.jpeg(side), stamp, frame_id))
            pubs["info"].publish(camera_info_msg(K[side], width, height, stamp, frame_id,
                                                 self.baseline_m if side == "right" else 0.0))
        if self.stereo.get_subscription_count():
            self.stereo.publish(compressed_msg(frame.stereo_jpeg(), stamp, self.frame_ids["left"]))
        self.published += 1
