"""xr_input's headset source: which of the WebXR server's samples are published, and what of each. ROS-free.

* When: in real time every sample as it arrives (at the headset's rate, stamped with its arrival); in lockstep
  (the simulation graph's tests) at each /clock tick the server's newest sample if it was not published yet
  (``NewestOnce``), stamped with the tick: a headset's 60–90 Hz then meets the simulation's own pace, one sample
  per tick at most, and a headset that stops sending publishes nothing.
* What (``Publication``): the wrists only when the head and both wrists are tracked (``XrSample.valid``: no
  fallback pose ever reaches the IK; retarget's clutch holds when they stop coming); the head when it is tracked;
  each hand's 25 landmarks when that hand is tracked; the Joy reading always (its frame says which layout:
  ``xr_hands`` or ``xr_controllers``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from g1_teleop.core.xr_input_contract import JOY_FRAMES
from g1_teleop.operator.input_sources import XrFrame
from g1_teleop.operator.webxr_samples import XrSample


@dataclass(frozen=True)
class Publication:
    """What xr_input publishes of one headset sample. frame: the poses as (7,) vectors and the Joy reading;
    head, wrists: whether to publish them (tracked); left_hand, right_hand: (25, 3) landmarks in the hand frame
    (WebXR Hand Input order), None when not tracked (or controllers); joy_frame: the Joy message's frame_id."""

    frame: XrFrame
    head: bool
    wrists: bool
    left_hand: np.ndarray | None
    right_hand: np.ndarray | None
    joy_frame: str


def publication(sample: XrSample, input: str) -> Publication:
    """What to publish of ``sample`` from a headset streaming ``input`` ("hands" or "controllers")."""
    return Publication(sample.frame(), sample.poses.head_valid, sample.valid, sample.left_hand_points,
                       sample.right_hand_points, JOY_FRAMES[input])


class NewestOnce:
    """Lockstep: the server's newest sample, each one once."""

    def __init__(self) -> None:
        self._last: XrSample | None = None

    def take(self, newest: XrSample | None) -> XrSample | None:
        """``newest`` when it was not taken before, else None."""
        if newest is None or newest is self._last:
            return None
        self._last = newest
        return newest
