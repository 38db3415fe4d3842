"""A hand's wrist pose in OpenXR's hand-joint axes, found from its landmarks alone. ROS-free.

Trackers give the wrist in axes of their own (ARKit's hand anchor is not OpenXR's wrist joint); the landmarks'
positions are the same anatomy everywhere. OpenXR's wrist axes (XR_EXT_hand_tracking, as WebXR Hand Input): −z
from the wrist toward the fingers, +y out of the back of the hand, x = y × z (toward the thumb of a left hand, the
little finger of a right one). Here +y is the normal of the plane through the wrist and the index and little
knuckles, pointing to the back of the hand (which side that is depends on the hand), and −z the direction to the
middle knuckle within that plane. Points in the WebXR Hand Input order (``webxr_events.HAND_JOINTS``).
"""

from __future__ import annotations

import numpy as np

WRIST, INDEX_KNUCKLE, MIDDLE_KNUCKLE, LITTLE_KNUCKLE = 0, 6, 11, 21  # WebXR: *-phalanx-proximal


def wrist_from_landmarks(side: str, points: np.ndarray) -> np.ndarray:
    """world_T_wrist (4, 4) in OpenXR's wrist axes from a ``side`` ("left"/"right") hand's (25, 3) landmarks in
    the world (m); ValueError when the knuckles are not spread (a degenerate or untracked hand)."""
    if side not in ("left", "right"):
        raise ValueError(f"side must be left or right, got {side!r}")
    p = np.asarray(points, dtype=float)
    to_index, to_little = p[INDEX_KNUCKLE] - p[WRIST], p[LITTLE_KNUCKLE] - p[WRIST]
    normal = np.cross(to_index, to_little)  # the palm's side for a right hand, the back's for a left one
    length = np.linalg.norm(normal)
    if not np.isfinite(length) or length < 1e-6:
        raise ValueError("hand landmarks: the wrist and the index and little knuckles do not span a plane")
    y = normal / length if side == "left" else -normal / length
    forward = p[MIDDLE_KNUCKLE] - p[WRIST]
    forward = forward - (forward @ y) * y
    if np.linalg.norm(forward) < 1e-6:
        raise ValueError("hand landmarks: the middle knuckle is not beside the wrist")
    z = -forward / np.linalg.norm(forward)
    T = np.eye(4)
    T[:3, :3] = np.column_stack([np.cross(y, z), y, z])
    T[:3, 3] = p[WRIST]
    return T
