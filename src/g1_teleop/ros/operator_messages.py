"""The operator topics' messages (xr_input → retarget, hand_retarget, body_retarget): poses copied value for value,
hand landmarks and body points as geometry_msgs/PoseArray.

- xr/head, xr/*_wrist: PoseStamped from a (7,) vector (x, y, z m; qw, qx, qy, qz), the values copied as they are
  (not through a rotation matrix as ``ros.messages.pose_stamped_msg``: a bag replay publishes the recorded bits).
- xr/*_hand: the 25 landmarks of a hand (m, in its hand frame ``xr_left_hand``/``xr_right_hand``: the wrist target's
  frame turned by operator.xr_frames.WRIST_R_HAND; WebXR Hand Input order), orientations identity.
- xr/body: the operator's 24 body points (g1_teleop.core.body_points, XRobot's order) as poses in the operator's
  z-up world (frame ``operator_world``: x forward, y left, floor at z = 0).
"""

from __future__ import annotations

import numpy as np
from builtin_interfaces.msg import Time
from geometry_msgs.msg import Pose, PoseArray, PoseStamped

from g1_teleop.core.body_points import BODY_POINT_COUNT

BODY_FRAME = "operator_world"
HAND_FRAMES = {"left": "xr_left_hand", "right": "xr_right_hand"}
"""xr/*_hand's frames: the operator's hand at the wrist target (robot_state: pelvis → xr_*_hand from xr/*_wrist)."""
_UNIT_TOLERANCE = 1e-3


def pose_msg(pose: np.ndarray, stamp: Time, frame_id: str) -> PoseStamped:
    """(7,) position (m) and orientation (w, x, y, z) → PoseStamped, copied value for value."""
    msg = PoseStamped()
    msg.header.stamp, msg.header.frame_id = stamp, frame_id
    p, o = msg.pose.position, msg.pose.orientation
    p.x, p.y, p.z, o.w, o.x, o.y, o.z = (float(v) for v in pose)
    return msg


def landmarks_msg(points: np.ndarray, stamp: Time, frame_id: str, msg: PoseArray | None = None) -> PoseArray:
    """(25, 3) hand landmarks (m) → PoseArray (orientations identity); into ``msg``'s poses when it has 25 (faster)."""
    msg = msg if msg is not None and len(msg.poses) == len(points) else PoseArray(poses=[Pose() for _ in points])
    msg.header.stamp, msg.header.frame_id = stamp, frame_id
    for pose, (x, y, z) in zip(msg.poses, points.tolist(), strict=True):
        pose.position.x, pose.position.y, pose.position.z = x, y, z
    return msg


def body_msg(body: np.ndarray, stamp: Time) -> PoseArray:
    """(24, 7) body point poses (x, y, z m; qw, qx, qy, qz) → PoseArray in ``operator_world``."""
    msg = PoseArray(poses=[Pose() for _ in range(len(body))])
    msg.header.stamp, msg.header.frame_id = stamp, BODY_FRAME
    for pose, (x, y, z, qw, qx, qy, qz) in zip(msg.poses, body.tolist(), strict=True):
        p, o = pose.position, pose.orientation
        p.x, p.y, p.z, o.w, o.x, o.y, o.z = x, y, z, qw, qx, qy, qz
    return msg


def body_from_msg(msg: PoseArray) -> tuple[np.ndarray, np.ndarray]:
    """xr/body → positions (24, 3) m and orientations (24, 4) (w, x, y, z); ValueError saying what is wrong."""
    if len(msg.poses) != BODY_POINT_COUNT:
        raise ValueError(f"{len(msg.poses)} poses; xr/body has the {BODY_POINT_COUNT} body points in XRobot's order")
    values = np.array([(p.position.x, p.position.y, p.position.z, p.orientation.w, p.orientation.x,
                        p.orientation.y, p.orientation.z) for p in msg.poses])
    if not np.all(np.isfinite(values)):
        raise ValueError("non-finite values")
    norms = np.linalg.norm(values[:, 3:], axis=1)
    if np.any(np.abs(norms - 1.0) > _UNIT_TOLERANCE):
        raise ValueError(f"orientations are not unit quaternions (norms {norms.min():.3f}–{norms.max():.3f})")
    return values[:, :3], values[:, 3:] / norms[:, None]
