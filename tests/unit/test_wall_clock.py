"""Real time: the simulation follows the wall clock, and slips instead of bursting when it trails too far."""

from __future__ import annotations

import pytest

from g1_teleop.sim.wall_clock import WallClockFollower


def test_follows_the_wall_clock_scaled_from_its_start() -> None:
    clock = WallClockFollower(realtime_factor=0.5, max_lag_s=0.02, start_s=100.0)
    catch_up = clock.catch_up(now_s=100.03, sim_ns=0)  # 15 ms simulated are due: within the lag
    assert catch_up.target_ns == pytest.approx(15e6)
    assert catch_up.lag_s == pytest.approx(0.015)
    assert catch_up.slip_s == 0.0 and clock.slipped_s == 0.0


def test_restart_moves_simulated_time_zero() -> None:
    clock = WallClockFollower(realtime_factor=1.0, max_lag_s=0.02, start_s=0.0)
    clock.restart(now_s=5.0)  # not started until 5 s
    assert clock.catch_up(now_s=5.01, sim_ns=0).target_ns == pytest.approx(10e6)


def test_trailing_too_far_slips_to_the_largest_lag_and_counts_it() -> None:
    clock = WallClockFollower(realtime_factor=2.0, max_lag_s=0.02, start_s=0.0)
    catch_up = clock.catch_up(now_s=0.5, sim_ns=100_000_000)  # 1 s simulated due, at 0.1 s: 0.9 s behind
    assert catch_up.lag_s == pytest.approx(0.9)
    assert catch_up.target_ns == pytest.approx(120e6)  # only max_lag_s ahead of the simulation
    assert catch_up.slip_s == pytest.approx(0.44)  # (0.9 − 0.02) simulated s at 2× = 0.44 wall s
    assert clock.slipped_s == pytest.approx(0.44)
    # The origin moved: 10 ms later, 20 ms simulated more are due from where it slipped to.
    assert clock.catch_up(now_s=0.51, sim_ns=120_000_000).target_ns == pytest.approx(140e6)
