"""/tf and /tf_static: tf2_msgs/msg/TFMessage (the installed package, else built: ``ros.message_build``) and its
conversions from the core's transforms. A transform ``parent_T_child`` (4×4, m) gives a TransformStamped with
``header.frame_id`` = parent and ``child_frame_id`` = child, as robot_state_publisher writes them."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from builtin_interfaces.msg import Time
from geometry_msgs.msg import TransformStamped

from g1_teleop.core.rotations import position_wxyz, transform
from g1_teleop.ros.message_build import message_package

TF_MESSAGE = "geometry_msgs/TransformStamped[] transforms\n"  # tf2_msgs/msg/TFMessage, as upstream defines it
TFMessage = message_package("tf2_msgs", {"TFMessage": TF_MESSAGE},
                            depends=("geometry_msgs", "std_msgs", "builtin_interfaces")).TFMessage


def transform_stamped_msg(parent: str, child: str, parent_T_child: np.ndarray, stamp: Time) -> TransformStamped:
    """geometry_msgs/TransformStamped of frame ``child`` in frame ``parent`` (4×4 transform, m)."""
    msg = TransformStamped(child_frame_id=child)
    msg.header.stamp, msg.header.frame_id = stamp, parent
    position, q = position_wxyz(parent_T_child)
    t, r = msg.transform.translation, msg.transform.rotation
    t.x, t.y, t.z = (float(v) for v in position)
    r.w, r.x, r.y, r.z = (float(v) for v in q)
    return msg


def tf_message(transforms: Iterable[tuple[str, str, np.ndarray]], stamp: Time) -> TFMessage:
    """A TFMessage of (parent, child, parent_T_child) transforms, all stamped ``stamp``."""
    return TFMessage(transforms=[transform_stamped_msg(parent, child, T, stamp) for parent, child, T in transforms])


def transform_from_msg(msg: TransformStamped) -> np.ndarray:
    """4×4 transform (m) of a TransformStamped: child in parent."""
    t, r = msg.transform.translation, msg.transform.rotation
    return transform((t.x, t.y, t.z), (r.w, r.x, r.y, r.z))
