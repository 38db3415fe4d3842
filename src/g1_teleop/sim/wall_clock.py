"""Real time: how far the simulation may run to follow the wall clock, ROS-free.

Simulated time follows the wall clock (``time.monotonic()``, s) scaled by ``realtime_factor``, in physics steps
of ``step_s`` (simulated s). A step is taken once the wall clock has reached its end, so that a state stamped t is
published at wall time t or later, as a robot's is. When the simulation trails by more than ``max_lag_s`` (a starved
process), it slips: the wall clock's origin moves by whole steps so that the lag is at most ``max_lag_s``, instead of
the simulation running the lost time in a burst the controllers could not follow.

The caller steps on a timer of one step's period and puts simulated time 0 on that timer's grid (:meth:`restart`
with the time a call was scheduled for): each call, however late, then takes the steps that ended by its own
scheduled time, and whole-step slips keep the grid. A state stamped t is then published as late after t as its call
came late, never earlier. (Before, the simulation stepped until it had passed the wall clock: its stamps came up to
a step ahead of it, by as much as each call happened to come late, and a clock that follows /clock from its least
delayed samples, the policy's, moved its ticks by up to a step with them.)
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class CatchUp:
    """Where the simulation should be now: run it up to ``target_ns`` (simulated ns). ``lag_s``: how far it
    trailed the wall clock (simulated s); ``slip_s``: the wall seconds given up by this call (0 unless it
    trailed by more than max_lag_s)."""

    target_ns: float
    lag_s: float
    slip_s: float

    def steps_due(self, sim_ns: int, step_ns: int, most: int) -> int:
        """How many physics steps of ``step_ns`` to take from ``sim_ns``: those that end at or before ``target_ns``,
        ``most`` at most."""
        return max(0, min(most, int((self.target_ns - sim_ns) // step_ns)))


class WallClockFollower:
    """Simulated time 0 at ``start_s``, then ``realtime_factor`` simulated seconds per wall second in steps of
    ``step_s``, trailing by at most ``max_lag_s`` (simulated s)."""

    def __init__(self, realtime_factor: float, max_lag_s: float, step_s: float, start_s: float) -> None:
        self.realtime_factor = realtime_factor
        self.max_lag_s = max_lag_s
        self.step_s = step_s
        self._origin_s = start_s  # wall time of simulated time 0, moved forward by every slip
        self.slipped_s = 0.0  # wall seconds given up in all

    def restart(self, now_s: float) -> None:
        """The simulation has not started: simulated time 0 is ``now_s``."""
        self._origin_s = now_s

    def catch_up(self, now_s: float, sim_ns: int) -> CatchUp:
        """Where the simulation, now at ``sim_ns``, should be at wall time ``now_s``; slips when too far behind."""
        target_ns = (now_s - self._origin_s) * self.realtime_factor * 1e9
        lag_s = (target_ns - sim_ns) / 1e9
        if lag_s <= self.max_lag_s:
            return CatchUp(target_ns, lag_s, 0.0)
        slip_s = math.ceil((lag_s - self.max_lag_s) / self.step_s - 1e-9) * self.step_s / self.realtime_factor
        self._origin_s += slip_s
        self.slipped_s += slip_s
        return CatchUp((now_s - self._origin_s) * self.realtime_factor * 1e9, lag_s, slip_s)
