"""The operator's wrist targets and the reached wrists as visualization_msgs/MarkerArray (RViz, Foxglove): per
hand point a sphere at its origin and an arrow along its x axis (towards the middle finger), targets
translucent green, reached wrists blue."""

from __future__ import annotations

from collections.abc import Sequence

from builtin_interfaces.msg import Time
from visualization_msgs.msg import Marker, MarkerArray

SIDES = ("left", "right")
TARGET, REACHED = "wrist_target", "wrist_reached"  # marker namespaces
_COLORS = {TARGET: (0.1, 0.8, 0.2, 0.6), REACHED: (0.1, 0.4, 1.0, 0.9)}  # r, g, b, a
SPHERE_DIAMETER_M = 0.03
ARROW_SIZE_M = (0.1, 0.01, 0.01)  # length along x, shaft and head width
_SHAPES = ((Marker.SPHERE, 0, (SPHERE_DIAMETER_M,) * 3), (Marker.ARROW, 1, ARROW_SIZE_M))  # kind, id offset, scale


class WristMarkers:
    """The markers of both namespaces and sides, made once (a Marker costs more to make in Python than to refill)
    and refilled by ``set``; ``message`` holds those set so far. Ids: 2·side index (+1 the arrow), so each message
    replaces the previous one's markers."""

    def __init__(self) -> None:
        self._markers: dict[tuple[str, str], list[Marker]] = {}
        for namespace, color in _COLORS.items():
            for side in SIDES:
                pair = []
                for kind, offset, scale in _SHAPES:
                    marker = Marker(ns=namespace, id=2 * SIDES.index(side) + offset, type=kind, action=Marker.ADD)
                    marker.scale.x, marker.scale.y, marker.scale.z = scale
                    marker.color.r, marker.color.g, marker.color.b, marker.color.a = color
                    pair.append(marker)
                self._markers[namespace, side] = pair
        self._set: dict[tuple[str, str], None] = {}  # the pairs set so far, in order

    def set(self, namespace: str, side: str, position: Sequence[float], q_wxyz: Sequence[float], stamp: Time,
            frame_id: str) -> None:
        """One wrist pose in ``frame_id`` (position m, orientation w, x, y, z; floats)."""
        for marker in self._markers[namespace, side]:
            marker.header.stamp, marker.header.frame_id = stamp, frame_id
            p, o = marker.pose.position, marker.pose.orientation
            p.x, p.y, p.z = position
            o.w, o.x, o.y, o.z = q_wxyz
        self._set[namespace, side] = None

    def message(self) -> MarkerArray:
        return MarkerArray(markers=[m for key in self._set for m in self._markers[key]])
