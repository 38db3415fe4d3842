"""Real time: how far the simulation may run to follow the wall clock, ROS-free.

Simulated time follows the wall clock (``time.monotonic()``, s) scaled by ``realtime_factor``. When the
simulation trails it by more than ``max_lag_s`` (a starved process), it slips: the wall clock's origin moves
so that the lag is ``max_lag_s``, instead of the simulation running the lost time in a burst the controllers
could not follow.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CatchUp:
    """Where the simulation should be now: run it up to ``target_ns`` (simulated ns). ``lag_s``: how far it
    trailed the wall clock (simulated s); ``slip_s``: the wall seconds given up by this call (0 unless it
    trailed by more than max_lag_s)."""

    target_ns: float
    lag_s: float
    slip_s: float


class WallClockFollower:
    """Simulated time 0 at ``start_s``, then ``realtime_factor`` simulated seconds per wall second, trailing by at
    most ``max_lag_s`` (simulated s)."""

    def __init__(self, realtime_factor: float, max_lag_s: float, start_s: float) -> None:
        self.realtime_factor = realtime_factor
        self.max_lag_s = max_lag_s
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
        slip_s = (lag_s - self.max_lag_s) / self.realtime_factor
        self._origin_s += slip_s
        self.slipped_s += slip_s
        return CatchUp(sim_ns + self.max_lag_s * 1e9, lag_s, slip_s)
