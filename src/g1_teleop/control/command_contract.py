"""The whole-body command's own contract, ROS-free: whatever a controller or the IK computes, the command that
leaves the policy is finite and inside the robot's limits.

Targets q within the joint limits, velocities dq within the velocity limits, feed-forward torques within the
effort limits. A non-finite value (a controller fed extreme inputs, e.g. inf − inf) is replaced before clipping:
a target by the previous command's (or, before the first, by the fallback the caller gives: the measured pose),
a velocity or a torque by 0. What was changed is reported by kind, for once-only warnings. Vectors are in DDS
motor order: rad, rad/s, N·m.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class BoundedCommand:
    """A command inside the contract and the kinds of correction it needed (``nonfinite``, ``position``,
    ``velocity``, ``effort``), each with the number of joints it touched."""

    q: np.ndarray
    dq: np.ndarray
    tau_ff: np.ndarray
    corrections: dict[str, int]


class CommandContract:
    def __init__(self, q_lower: np.ndarray, q_upper: np.ndarray, velocity_limit: np.ndarray,
                 effort_limit: np.ndarray) -> None:
        self.q_lower, self.q_upper = np.asarray(q_lower, dtype=float), np.asarray(q_upper, dtype=float)
        self.velocity_limit = np.asarray(velocity_limit, dtype=float)
        self.effort_limit = np.asarray(effort_limit, dtype=float)
        n = len(self.q_lower)
        if not all(len(v) == n for v in (self.q_upper, self.velocity_limit, self.effort_limit)):
            raise ValueError("command contract: the limit vectors differ in length")
        if not (np.all(self.q_lower <= self.q_upper) and np.all(self.velocity_limit > 0)
                and np.all(self.effort_limit > 0)):
            raise ValueError("command contract: a lower joint limit above its upper one, or a velocity or effort "
                             "limit not > 0")
        self._previous_q: np.ndarray | None = None

    def bound(self, q: np.ndarray, dq: np.ndarray, tau_ff: np.ndarray, fallback_q: np.ndarray) -> BoundedCommand:
        """``q``, ``dq``, ``tau_ff`` made finite and clipped to the limits; ``fallback_q`` replaces non-finite
        targets before the first command."""
        q, dq, tau_ff = (np.array(v, dtype=float) for v in (q, dq, tau_ff))
        corrections: dict[str, int] = {}
        bad = ~np.isfinite(q)
        if bad.any():
            q[bad] = (self._previous_q if self._previous_q is not None else np.asarray(fallback_q, dtype=float))[bad]
            q[~np.isfinite(q)] = np.clip(0.0, self.q_lower, self.q_upper)[~np.isfinite(q)]
        n_bad = int(bad.sum())
        for values in (dq, tau_ff):
            missing = ~np.isfinite(values)
            values[missing] = 0.0
            n_bad += int(missing.sum())
        if n_bad:
            corrections["nonfinite"] = n_bad
        for kind, values, low, high in (("position", q, self.q_lower, self.q_upper),
                                        ("velocity", dq, -self.velocity_limit, self.velocity_limit),
                                        ("effort", tau_ff, -self.effort_limit, self.effort_limit)):
            outside = int(np.count_nonzero((values < low) | (values > high)))
            if outside:
                corrections[kind] = outside
                np.clip(values, low, high, out=values)
        self._previous_q = q.copy()
        return BoundedCommand(q, dq, tau_ff, corrections)
