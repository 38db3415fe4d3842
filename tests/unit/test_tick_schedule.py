"""When the policy's real-time tick computes and writes (control/tick_schedule.py), on a control clock locked to a
source that runs 100 s ahead of the monotonic clock."""

from __future__ import annotations

import pytest

from g1_teleop.control.control_clock import ControlClock
from g1_teleop.control.tick_schedule import WAKE_EARLY_S, TickSchedule

TICK_S = 0.22  # the next tick's time (monotonic s) once the clock has ticked at 0.2 s


def locked_clock() -> ControlClock:
    """Samples every 5 ms from 0 to 0.2 s (source time = 100 s + monotonic), then the tick of 0.2 s."""
    clock = ControlClock()
    for k in range(41):
        clock.put(round((100.0 + k * 0.005) * 1e9), k * 0.005)
    assert clock.poll(0.2).due
    return clock


@pytest.mark.parametrize(("lead_s", "woke_before_s", "compute_before_s"), [
    (0.0, 0.0015, 0.0),  # no lead: woken early, it computes at the tick's time
    (0.001, 0.0018, 0.001),  # a lead shorter than the early wake: it computes 1 ms ahead
    (0.004, 0.003, 0.004),  # woken within the lead: its computing time is past (computes at once)
])
def test_an_early_wake_computes_ahead_by_the_lead_and_writes_at_the_ticks_time(lead_s, woke_before_s,
                                                                               compute_before_s):
    clock = locked_clock()
    schedule = TickSchedule(clock, lead_s)
    assert schedule.wake_lead_s == max(lead_s, WAKE_EARLY_S)
    plan = schedule.plan(TICK_S - woke_before_s)
    assert plan.early and plan.ahead_s == pytest.approx(woke_before_s, abs=1e-6)
    assert plan.tick_s == pytest.approx(TICK_S, abs=1e-6)
    assert plan.compute_s == pytest.approx(TICK_S - compute_before_s, abs=1e-6)
    timing = clock.poll(plan.tick_s)
    assert timing.due and timing.stamp_ns == round(100.22e9)
    # The next wake: the wake's lead before the tick after, however long this tick took.
    for now_s in (plan.compute_s, TICK_S + 0.003):
        assert now_s + schedule.next_wake_in_s(plan, timing, now_s) == pytest.approx(
            TICK_S + 0.02 - schedule.wake_lead_s, abs=1e-6)


def test_a_wake_after_the_ticks_time_computes_and_writes_at_once():
    clock = locked_clock()
    plan = TickSchedule(clock, 0.004).plan(TICK_S + 0.001)
    assert not plan.early and plan.ahead_s == pytest.approx(-0.001, abs=1e-6)
    assert plan.tick_s == TICK_S + 0.001 and plan.compute_s < plan.woke_s
    timing = clock.poll(plan.tick_s)
    assert timing.due and timing.stamp_ns == round(100.22e9)


def test_a_wake_before_the_lead_waits_for_the_next_one():
    clock = locked_clock()
    schedule = TickSchedule(clock, 0.004)
    plan = schedule.plan(TICK_S - 0.010)  # (a first wake, or after a clock's relock)
    assert not plan.early and plan.tick_s == plan.woke_s
    timing = clock.poll(plan.tick_s)
    assert not timing.due
    assert plan.woke_s + schedule.next_wake_in_s(plan, timing, plan.woke_s) == pytest.approx(TICK_S - 0.004, abs=1e-6)
    assert not TickSchedule(locked_clock(), 0.004).plan(TICK_S - 0.0043).early  # (the timer wakes late, not early)


def test_no_tick_before_the_clock_has_samples():
    plan = TickSchedule(ControlClock(), 0.004).plan(1.0)
    assert plan.ahead_s is None and not plan.early and plan.tick_s == plan.compute_s == 1.0
