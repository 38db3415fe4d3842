"""The operator's tracked body points: the 24 joints of XRobot's (PICO body tracking) body layout, in its order.
ROS-free.

Order as XRobot streams them (louislelay/GMR, general_motion_retargeting/xrobot_utils.py): index i of a body
frame is ``XROBOT_BODY_POINTS[i]``. Each point has a position (m) and an orientation (w, x, y, z); in g1_teleop
both are in a z-up world frame (x forward, y left), the body frames keep XRobot's own axes (see
``g1_teleop.operator.body_stream`` for the conversion from XRobot's Unity frame).
"""

from __future__ import annotations

XROBOT_BODY_POINTS: tuple[str, ...] = (
    "Pelvis", "Left_Hip", "Right_Hip", "Spine1", "Left_Knee", "Right_Knee", "Spine2", "Left_Ankle",
    "Right_Ankle", "Spine3", "Left_Foot", "Right_Foot", "Neck", "Left_Collar", "Right_Collar", "Head",
    "Left_Shoulder", "Right_Shoulder", "Left_Elbow", "Right_Elbow", "Left_Wrist", "Right_Wrist", "Left_Hand",
    "Right_Hand",
)
BODY_POINT_COUNT = len(XROBOT_BODY_POINTS)


def body_point_index(name: str) -> int:
    """Index of a body point by name; KeyError naming the known points otherwise."""
    try:
        return XROBOT_BODY_POINTS.index(name)
    except ValueError:
        raise KeyError(f"unknown body point {name!r}; XRobot's are {', '.join(XROBOT_BODY_POINTS)}") from None
