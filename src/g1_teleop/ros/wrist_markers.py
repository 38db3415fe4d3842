"""The operator's wrist targets and the reached wrists as visualization_msgs/MarkerArray (RViz, Foxglove): per
hand point a sphere at its origin and an arrow along its x axis (towards the middle finger), targets
translucent green, reached wrists blue."""

from __future__ import annotations

import numpy as np
from builtin_interfaces.msg import Time
from visualization_msgs.msg import Marker

SIDES = ("left", "right")
TARGET, REACHED = "wrist_target", "wrist_reached"  # marker namespaces
_COLORS = {TARGET: (0.1, 0.8, 0.2, 0.6), REACHED: (0.1, 0.4, 1.0, 0.9)}  # r, g, b, a
SPHERE_DIAMETER_M = 0.03
ARROW_SIZE_M = (0.1, 0.01, 0.01)  # length along x, shaft and head width


def wrist_markers(namespace: str, side: str, position: np.ndarray, q_wxyz: np.ndarray, stamp: Time,
                  frame_id: str) -> list[Marker]:
    """A sphere and an arrow for one wrist pose in ``frame_id`` (position m, orientation w, x, y, z); ids: 2·side
    index (+1 the arrow), so each new message replaces the previous one's markers."""
    markers = []
    for kind, offset, scale in ((Marker.SPHERE, 0, (SPHERE_DIAMETER_M,) * 3), (Marker.ARROW, 1, ARROW_SIZE_M)):
        marker = Marker(ns=namespace, id=2 * SIDES.index(side) + offset, type=kind, action=Marker.ADD)
        marker.header.stamp, marker.header.frame_id = stamp, frame_id
        p, o = marker.pose.position, marker.pose.orientation
        p.x, p.y, p.z = (float(v) for v in position)
        o.w, o.x, o.y, o.z = (float(v) for v in q_wxyz)
        marker.scale.x, marker.scale.y, marker.scale.z = scale
        c = marker.color
        c.r, c.g, c.b, c.a = _COLORS[namespace]
        markers.append(marker)
    return markers
