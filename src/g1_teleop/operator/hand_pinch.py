"""The thumb–index pinch of a tracked hand, with hysteresis. ROS-free.

A pinch closes when the thumb tip and the index fingertip (joints "thumb-tip" and "index-finger-tip" of the
WebXR Hand Input specification) come closer than ``on_m`` and opens again only beyond ``off_m``, so tracking
noise of a few millimetres at the threshold does not make it flicker. (vuer's client reports ``pinch`` as a
single 1 cm threshold: it flickers, and fingertip joints of touching fingers sit 1–2 cm apart on some headsets.)
"""

from __future__ import annotations


class Pinch:
    """One hand's pinch state. Distances in metres; a hand that is not tracked releases the pinch."""

    def __init__(self, on_m: float, off_m: float) -> None:
        if not 0.0 < on_m < off_m:
            raise ValueError(f"pinch thresholds need 0 < on < off, got on {on_m} m, off {off_m} m")
        self.on_m, self.off_m = on_m, off_m
        self.closed = False

    def update(self, distance_m: float | None) -> bool:
        """The pinch after a new thumb–index distance (None: the hand is not tracked)."""
        if distance_m is None:
            self.closed = False
        elif self.closed:
            self.closed = distance_m <= self.off_m
        else:
            self.closed = distance_m < self.on_m
        return self.closed


def pinch_closure(distance_m: float | None, open_m: float) -> float:
    """How far a pinch is closed, in [0, 1]: 0 at ``open_m`` apart or more (or not tracked), 1 touching."""
    if distance_m is None:
        return 0.0
    return min(max(1.0 - distance_m / open_m, 0.0), 1.0)
