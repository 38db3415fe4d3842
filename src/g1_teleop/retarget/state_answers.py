"""When retarget answers a joint state alone, in real time. ROS-free.

Each operator sample (a wrist pair) is answered at once, with the joint state last taken (the node takes the newest
after each answer). The node also takes the newest joint state ``rate_hz`` times a second (a timer:
g1_teleop.ros.polled_subscription) so that the IK's warm start follows the measured arms and the clutch holds, then
homes, when the operator's samples stop; such a state is answered only when no operator sample came within
``SAMPLE_WINDOW`` periods (1 / ``rate_hz``): the samples keep the arm target fresh. Answering the 200 Hz joint states
beside 60–90 Hz samples doubled the node's solves. Times: s, on one monotonic clock.
"""

from __future__ import annotations

SAMPLE_WINDOW = 1.5  # periods: samples at 1/1.5 of rate_hz or faster leave no joint state to answer


class StateAnswers:
    """Whether a joint state alone is to be answered now (``due``), given the operator samples (``sample``)."""

    def __init__(self, rate_hz: float) -> None:
        self._window_s = SAMPLE_WINDOW / rate_hz
        self._sample_s = float("-inf")

    def sample(self, t: float) -> None:
        """An operator sample came at ``t`` (and is answered)."""
        self._sample_s = t

    def due(self, t: float) -> bool:
        """Whether the joint state taken at ``t`` is answered: not within the window of an operator sample."""
        return t - self._sample_s >= self._window_s
