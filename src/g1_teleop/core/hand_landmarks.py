"""Hand landmark layouts of the headsets → the 25 landmarks the hand retargeter takes. ROS-free.

The retargeter takes the 25 joints of the WebXR Hand Input order (W3C WebXR Hand Input Module, "XRHandJoint"):
wrist, then thumb (metacarpal, phalanx-proximal, phalanx-distal, tip), then index, middle, ring and pinky
(metacarpal, phalanx-proximal, phalanx-intermediate, phalanx-distal, tip each), positions in metres in the hand
frame xr_input publishes on xr/*_hand (operator.xr_frames.hand_points_in_wrist: x out of the back of the hand,
y from the fingers towards the wrist, z the OpenXR joint x axis).

Other trackers name the same anatomical joints in other orders; :data:`LAYOUTS` gives, for each WebXR joint i,
the index of that joint in the tracker's array:

- ``avp``: Apple Vision Pro, ARKit's ``HandSkeleton.JointName`` (Apple developer documentation, visionOS): wrist,
  thumbKnuckle, thumbIntermediateBase, thumbIntermediateTip, thumbTip, then indexFinger-, middleFinger-,
  ringFinger-, littleFinger- Metacarpal, Knuckle, IntermediateBase, IntermediateTip, Tip, then forearmWrist and
  forearmArm (27 in all; the last two are not hand landmarks). The first 25 are WebXR's order one for one
  (Improbable-AI/VisionProTeleop streams these 25 per hand).
- ``pico``: PICO's OpenXR runtime (and XRoboToolkit's hand data), ``XrHandJointEXT`` of the OpenXR
  XR_EXT_hand_tracking extension: PALM 0, WRIST 1, THUMB_METACARPAL 2 … LITTLE_TIP 25 (26 in all). WebXR's order
  is OpenXR's without the palm: WebXR i is OpenXR i + 1.

A layout only re-orders: the points must already be in the hand frame above (each tracker's own joint axes are
turned into it by the operator side, as xr_frames does for WebXR).
"""

from __future__ import annotations

import numpy as np

HAND_LANDMARKS = 25
WRIST, THUMB_TIP, INDEX_TIP, MIDDLE_TIP = 0, 4, 9, 14  # WebXR Hand Input indices

LAYOUTS: dict[str, tuple[int, ...]] = {
    "webxr": tuple(range(HAND_LANDMARKS)),
    "avp": tuple(range(HAND_LANDMARKS)),
    "pico": tuple(range(1, HAND_LANDMARKS + 1)),
}
LAYOUT_SIZES = {"webxr": 25, "avp": 27, "pico": 26}  # landmarks a tracker reports per hand


def to_webxr_order(points: np.ndarray, layout: str) -> np.ndarray:
    """A tracker's (N, 3) hand landmarks → the (25, 3) WebXR order; ValueError for an unknown layout or size."""
    if layout not in LAYOUTS:
        raise ValueError(f"unknown hand landmark layout {layout!r}: one of {', '.join(LAYOUTS)}")
    p = np.asarray(points, dtype=float)
    if p.shape != (LAYOUT_SIZES[layout], 3):
        raise ValueError(f"{layout} hand landmarks have shape ({LAYOUT_SIZES[layout]}, 3), got {p.shape}")
    return p[list(LAYOUTS[layout])]
