"""The PD gains a bridge applies to the commands it passes on, ROS-free.

Until the controller in charge says which gains it wants (the ``teleop/gains`` topic), a bridge applies a
gain profile of the robot description; from the first valid gains on, the latest valid ones. Gains that
fail their checks are counted and change nothing. kp in N·m/rad, kd in N·m·s/rad, one per joint.
"""

from __future__ import annotations

import numpy as np


class GainsInForce:
    """The gains for the next command: a named profile's, then the controller's latest valid ones."""

    def __init__(self, profile: str, kp: np.ndarray, kd: np.ndarray) -> None:
        self.profile = profile
        self.kp, self.kd = kp.copy(), kd.copy()
        self.since_s: float | None = None  # when the controller's first gains were taken (the bridge's clock, s)
        self.refused = 0  # gains messages refused so far

    def take(self, kp: np.ndarray, kd: np.ndarray, now_s: float) -> bool:
        """Apply ``kp``, ``kd`` (already checked) from now on; True when they are the controller's first."""
        self.kp, self.kd = kp.copy(), kd.copy()
        first = self.since_s is None
        if first:
            self.since_s = now_s
        return first

    def refuse(self) -> None:
        """A gains message failed its checks: count it; the gains in force stay."""
        self.refused += 1

    @property
    def source(self) -> str:
        """Where the gains in force come from, for logs and diagnostics."""
        if self.since_s is None:
            return f"gain profile '{self.profile}' (no teleop/gains yet)"
        return f"teleop/gains since {self.since_s:.3f} s"
