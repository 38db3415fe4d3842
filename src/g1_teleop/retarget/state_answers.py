"""When retarget answers a joint state alone, in real time. ROS-free.

Each operator sample (a wrist pair) is answered at once. A joint state is answered too, so that the IK's warm start
follows the measured arms and the clutch holds, then homes, when the operator's samples stop, but at most
``rate_hz`` times a second and not while the samples keep the arm target fresh: none within ``SAMPLE_WINDOW``
periods (1 / ``rate_hz``) of an operator sample. Answering the 200 Hz joint states beside 60–90 Hz samples doubled
the node's solves. Times: s, on one monotonic clock.
"""

from __future__ import annotations

from g1_teleop.core.decimator import Decimator

SAMPLE_WINDOW = 1.5  # periods: samples at 1/1.5 of rate_hz or faster leave no joint state to answer


class StateAnswers:
    """Whether a joint state alone is to be answered now (``due``), given the operator samples (``sample``)."""

    def __init__(self, rate_hz: float) -> None:
        self._schedule = Decimator(rate_hz)
        self._window_s = SAMPLE_WINDOW / rate_hz
        self._sample_s = float("-inf")

    def sample(self, t: float) -> None:
        """An operator sample came at ``t`` (and is answered)."""
        self._sample_s = t

    def due(self, t: float) -> bool:
        """Whether the joint state arriving at ``t`` is answered: not within the window of an operator sample, and
        at most ``rate_hz`` a second."""
        return t - self._sample_s >= self._window_s and self._schedule(t)
