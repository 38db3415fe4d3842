"""Real time: the simulation follows the wall clock in whole physics steps, never ahead of it, and slips (by whole
steps) instead of bursting when it trails too far."""

from __future__ import annotations

import numpy as np
import pytest

from g1_teleop.sim.wall_clock import WallClockFollower

STEP_S, STEP_NS = 0.005, 5_000_000


def test_follows_the_wall_clock_scaled_from_its_start() -> None:
    clock = WallClockFollower(realtime_factor=0.5, max_lag_s=0.02, step_s=STEP_S, start_s=100.0)
    catch_up = clock.catch_up(now_s=100.03, sim_ns=0)  # 15 ms simulated are due: within the lag
    assert catch_up.target_ns == pytest.approx(15e6)
    assert catch_up.lag_s == pytest.approx(0.015)
    assert catch_up.slip_s == 0.0 and clock.slipped_s == 0.0


def test_restart_moves_simulated_time_zero() -> None:
    clock = WallClockFollower(realtime_factor=1.0, max_lag_s=0.02, step_s=STEP_S, start_s=0.0)
    clock.restart(now_s=5.0)  # not started until 5 s
    assert clock.catch_up(now_s=5.01, sim_ns=0).target_ns == pytest.approx(10e6)


def test_trailing_too_far_slips_by_whole_steps_to_within_the_largest_lag_and_counts_it() -> None:
    clock = WallClockFollower(realtime_factor=2.0, max_lag_s=0.02, step_s=STEP_S, start_s=0.0)
    catch_up = clock.catch_up(now_s=0.5012, sim_ns=100_000_000)  # 1.0024 s simulated due, at 0.1 s: 0.9024 s behind
    assert catch_up.lag_s == pytest.approx(0.9024)
    assert catch_up.slip_s == pytest.approx(0.4425)  # 177 steps (0.885 simulated s) at 2×: the grid is kept
    assert catch_up.target_ns == pytest.approx(117.4e6)  # within max_lag_s of the simulation
    assert clock.slipped_s == pytest.approx(0.4425)
    # The origin moved: 5 ms later, 10 ms simulated more are due from where it slipped to.
    assert clock.catch_up(now_s=0.5062, sim_ns=115_000_000).target_ns == pytest.approx(127.4e6)


@pytest.mark.parametrize(("wall_s", "steps"), [(0.0049, 0), (0.005, 1), (0.0149, 2), (0.5, 4)])
def test_steps_end_at_or_before_the_wall_clock_and_at_most_a_control_period(wall_s: float, steps: int) -> None:
    clock = WallClockFollower(realtime_factor=1.0, max_lag_s=1.0, step_s=STEP_S, start_s=0.0)
    assert clock.catch_up(now_s=wall_s, sim_ns=0).steps_due(0, STEP_NS, most=4) == steps


def test_calls_on_the_grid_of_simulated_time_take_the_steps_of_their_scheduled_time_however_late() -> None:
    """A timer's calls at k · 5 ms, each late by up to 4.7 ms (less than a step, less the margin), and now and then
    one a period or more late (a busy executor; rcl keeps the calls on the grid): each publishes the stamp of its
    scheduled time, never one ahead of the wall clock; the stalls slip the simulation by whole steps."""
    margin_s = 0.0002
    clock = WallClockFollower(realtime_factor=1.0, max_lag_s=0.02, step_s=STEP_S, start_s=-margin_s)
    rng, sim_ns, k = np.random.default_rng(0), 0, 0
    while k < 4000:
        k += 1 if rng.uniform() > 0.01 else int(rng.integers(2, 12))  # calls a period or more late were skipped
        now_s = k * STEP_S + rng.uniform(0.0, 0.0047)
        catch_up = clock.catch_up(now_s, sim_ns)
        sim_ns += STEP_NS * catch_up.steps_due(sim_ns, STEP_NS, most=4)
        assert sim_ns == round((k * STEP_S - clock.slipped_s) * 1e9)
        assert (now_s - clock.slipped_s) * 1e9 >= sim_ns
    assert clock.slipped_s > 0
