"""A model operator hand for the hand retargeter's bench and tests: its 25 WebXR landmarks in the hand frame
xr_input publishes (made by operator.xr_frames.hand_points_in_wrist from OpenXR joint positions, as a headset's).

An adult hand of typical proportions (m). OpenXR wrist axes: x the joint x axis (towards the thumb of a left
hand, the little finger of a right one), y out of the back of the hand, z from the fingers towards the wrist.
"""

from __future__ import annotations

import numpy as np

from g1_teleop.operator.xr_frames import hand_points_in_wrist

# finger: (sideways offset towards the thumb, knuckle distance from the wrist, phalanx lengths to the tip)
_FINGERS = {
    "index": (0.022, 0.090, (0.045, 0.025, 0.022)),
    "middle": (0.0, 0.095, (0.048, 0.028, 0.023)),
    "ring": (-0.020, 0.090, (0.045, 0.027, 0.022)),
    "pinky": (-0.038, 0.080, (0.035, 0.020, 0.020)),
}
_THUMB_BASE = np.array([0.020, -0.010, -0.020])  # metacarpal joint, thumb side first (left hand)
_THUMB_OPEN = (np.array([0.75, -0.10, -0.65]), (0.045, 0.032, 0.028))  # direction out, bone lengths
_PINCH_FLEXION = (0.55, 0.55, 0.35)  # index (and middle) joints in a pinch (rad)


def _finger(side_sign: float, name: str, flexion: tuple[float, float, float]) -> np.ndarray:
    """Metacarpal, proximal, intermediate, distal joints and tip (5, 3), flexed towards the palm (rad)."""
    lateral, knuckle, lengths = _FINGERS[name]
    points = [np.array([side_sign * lateral, 0.0, -0.02]), np.array([side_sign * lateral, 0.0, -knuckle])]
    angle = 0.0
    for bend, length in zip(flexion, lengths, strict=True):
        angle += bend
        points.append(points[-1] + length * np.array([0.0, -np.sin(angle), -np.cos(angle)]))
    return np.array(points)


def _thumb(side_sign: float, tip_at: np.ndarray | None) -> np.ndarray:
    """Metacarpal, proximal, distal joints and tip (4, 3): spread out, or bent to put the tip at ``tip_at``."""
    base = _THUMB_BASE * [side_sign, 1.0, 1.0]
    direction, lengths = _THUMB_OPEN
    direction = direction * [side_sign, 1.0, 1.0] / np.linalg.norm(direction)
    proximal = base + lengths[0] * direction
    if tip_at is None:
        return np.array([base, proximal, proximal + lengths[1] * direction,
                         proximal + (lengths[1] + lengths[2]) * direction])
    return np.array([base, proximal, 0.5 * (proximal + tip_at), tip_at])


def hand_landmarks(side: str, curl: float = 0.0, pinch: float = 0.0, finger: str = "index") -> np.ndarray:
    """(25, 3) landmarks of a ``side`` hand, WebXR order, in xr/*_hand's frame (m). ``curl`` in [0, 1]: open hand
    → fist (all four fingers); ``pinch`` in [0, 1]: open hand → thumb tip on the tip of ``finger`` (index or
    middle; both bent as in a pinch), each landmark moving on a straight line."""
    return hand_points_in_wrist(np.eye(4), hand_joint_points(side, curl, pinch, finger))


def hand_joint_points(side: str, curl: float = 0.0, pinch: float = 0.0, finger: str = "index") -> np.ndarray:
    """The same hand's (25, 3) joint positions in its OpenXR wrist joint frame (m), as a headset reports them."""
    sign = 1.0 if side == "left" else -1.0
    fist = (1.4 * curl, 1.5 * curl, 0.9 * curl)
    open_hand = [_thumb(sign, None)] + [_finger(sign, name, fist) for name in _FINGERS]
    points = np.vstack(open_hand)
    if pinch > 0.0:
        index, middle = _finger(sign, "index", _PINCH_FLEXION), _finger(sign, "middle", _PINCH_FLEXION)
        tip = {"index": index, "middle": middle}[finger][-1]
        thumb = _thumb(sign, tip + np.array([0.0, -0.008, 0.0]))  # pads touch: tips 8 mm apart
        pinched = np.vstack([thumb, index, middle] + [_finger(sign, name, fist) for name in ("ring", "pinky")])
        points = (1.0 - pinch) * points + pinch * pinched
    return np.vstack([np.zeros(3), points])  # the wrist at the joint frame's origin
