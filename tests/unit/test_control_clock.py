"""The policy's own clock: ticks on a 20 ms grid of the source's time, not on the arrival of its samples."""

from __future__ import annotations

import numpy as np
import pytest

from g1_teleop.control.control_clock import ControlClock, ControlClockConfig

PERIOD_NS = 20_000_000


def run(clock: ControlClock, seconds: float, rng: np.random.Generator, rate: float = 1.0, delay_s: float = 0.003,
        source_start_s: float = 100.0, wake_noise_s: float = 0.0002, extra=None) -> list[tuple[float, int]]:
    """A simulator publishing its time every 5 ms of its own (on the wall clock × rate), each sample delivered
    0..delay_s late; the clock polled when its timer asks (plus wake-up noise). The ticks: (mono s, stamp ns)."""
    events = [(k * 0.005 / rate + rng.uniform(0, delay_s), "sample", round((source_start_s + k * 0.005) * 1e9))
              for k in range(int(seconds * rate / 0.005))]
    events += extra or []
    events.sort()
    ticks: list[tuple[float, int]] = []
    next_poll = 0.0
    for t, kind, value in events:
        while next_poll <= t:
            timing = clock.poll(next_poll)
            if timing.due:
                ticks.append((next_poll, timing.stamp_ns))
            next_poll += timing.wait_s + rng.uniform(0, wake_noise_s)
        if kind == "sample":
            clock.put(value, t)
    return ticks


def test_ticks_hold_a_steady_period_however_late_the_samples_arrive():
    clock = ControlClock()
    ticks = run(clock, 5.0, np.random.default_rng(1), delay_s=0.004)
    times, stamps = np.array([t for t, _ in ticks]), np.array([s for _, s in ticks])
    assert np.all(np.diff(stamps) == PERIOD_NS)  # every grid time once
    period = np.diff(times[10:])  # after the first samples fill the window
    assert abs(np.median(period) - 0.02) < 1e-4
    assert np.percentile(np.abs(period - 0.02), 99) < 1.0e-3, np.percentile(np.abs(period - 0.02), 99)
    # Each tick happens when the source's time reaches its stamp (within the delivery delay and the wake-up).
    sources = 100.0 + times  # the source's true time at each tick
    assert np.all(np.abs(sources[10:] - stamps[10:] * 1e-9) < 0.005)


def test_the_clock_follows_a_slower_source():
    clock = ControlClock()
    ticks = run(clock, 6.0, np.random.default_rng(2), rate=0.5)
    times = np.array([t for t, _ in ticks])
    assert clock.rate == pytest.approx(0.5, rel=0.02)
    assert np.median(np.diff(times[-50:])) == pytest.approx(0.04, rel=0.02)


def test_a_paused_source_stops_the_ticks():
    clock = ControlClock(ControlClockConfig(max_ahead_s=0.05))
    for k in range(100):
        clock.put(k * 5_000_000, k * 0.005)
    last = 99 * 5_000_000
    assert clock.now_ns(10.0) <= last + 50_000_000  # never runs far past its newest sample
    due = [clock.poll(0.5 + k * 0.01).due for k in range(100)]
    assert sum(due) <= 4  # the grid times up to the cap, then nothing


def test_negative_and_jumping_samples_are_refused_and_a_new_timeline_is_taken_after_a_while():
    clock = ControlClock()
    assert clock.put(-1, 0.0) == "negative" and not clock.locked
    results = [clock.put(k * 5_000_000, k * 0.005) for k in range(50)]
    assert set(results[:20]) == {"unconfirmed"} and set(results[21:]) == {None}  # locked once 0.1 s confirm it
    assert clock.put(10**18, 0.25) == "jump"  # ahead
    assert clock.put(0, 0.8) == "jump"  # far behind; the source has been silent for 0.55 s, but one sample
    assert clock.now_ns(0.26) == pytest.approx(0.26e9, abs=5e6)
    # Only refused samples for more than relock_after_s, confirming another timeline: a restarted simulator.
    relocked = [clock.put(k * 5_000_000, 0.9 + k * 0.005) for k in range(30)]
    assert clock.relocks == 1 and None in relocked
    assert clock.now_ns(0.9 + 0.145) == pytest.approx(0.145e9, abs=5e6)


def test_the_clock_locks_on_no_repeated_or_random_value():
    rng = np.random.default_rng(4)
    clock = ControlClock()
    for k in range(2000):
        clock.put(int(rng.choice([7 * 10**9, rng.integers(0, 2**62)])), k * 0.001)
    assert not clock.locked
    for k in range(40):  # then a real clock
        clock.put(k * 5_000_000, 2.0 + k * 0.005)
    assert clock.locked and clock.rate == pytest.approx(1.0, rel=0.01)


def test_fuzzed_samples_between_the_real_ones_do_not_move_the_ticks():
    rng = np.random.default_rng(3)
    fuzz = [(float(t), "sample", int(v)) for t, v in zip(rng.uniform(0.5, 5, 2000),
                                                         rng.choice([-5, 0, 10**17, 2**62, 99 * 10**9], 2000),
                                                         strict=True)]
    # and samples a little behind the real time (taken: they must not bend the rate or the ticks)
    fuzz += [(float(t), "sample", round((100 + t - rng.uniform(0.05, 0.4)) * 1e9)) for t in rng.uniform(0.5, 5, 500)]
    clock = ControlClock()
    ticks = run(clock, 5.0, rng, extra=fuzz)
    times, stamps = np.array([t for t, _ in ticks]), np.array([s for _, s in ticks])
    assert np.all(np.diff(stamps) == PERIOD_NS)
    assert np.percentile(np.abs(np.diff(times[10:]) - 0.02), 99) < 1.0e-3
    assert clock.relocks == 0 and sum(clock.refused.values()) > 1500 and clock.rate == pytest.approx(1.0, rel=0.01)


def test_a_tick_more_than_a_period_late_is_skipped_not_caught_up():
    clock = ControlClock()
    for k in range(40):
        clock.put(k * 5_000_000, k * 0.005)
    first = clock.poll(0.2)
    assert first.due
    late = clock.poll(0.2 + 0.045)  # the process stood still for two periods
    assert late.due and clock.skipped_ticks == 1
    assert not clock.poll(0.2 + 0.046).due  # no burst


def test_the_configuration_is_checked():
    with pytest.raises(ValueError, match="period_s must be a finite value > 0"):
        ControlClockConfig(period_s=0.0)


def test_the_clock_follows_a_simulator_that_slows_down_without_restarting():
    rng = np.random.default_rng(5)
    clock = ControlClock()
    source_s, ticks = 0.0, []
    for k in range(1200):  # 6 s: a sample every 5 ms of wall time, the simulator at 1.0 then at 0.3
        mono = k * 0.005
        source_s += 0.005 * (1.0 if mono < 2.0 else 0.3)
        clock.put(round(source_s * 1e9), mono + rng.uniform(0, 0.002))
        timing = clock.poll(mono + 0.0025)
        if timing.due:
            ticks.append(timing.stamp_ns)
    assert clock.rate == pytest.approx(0.3, rel=0.05) and clock.relocks == 0
    late = np.diff(ticks[-30:])
    assert np.all(late == PERIOD_NS)  # 20 ms of simulated time apart: 15 ticks per wall second


def test_a_starved_simulator_that_slips_is_followed_not_refused():
    """A composed process saturated: the simulator stands still for 0.6 s, then runs on from where it stood (it
    slips: sim/wall_clock.py) at 0.4 of real time, its samples delivered in bursts up to 60 ms late. A sample far
    behind the extrapolation but newer than the last is the source itself: taken, the ticks follow it. (The clock
    used to refuse them as a jump, no tick until a relock; in test_avp_graph's stall the bursts of a saturated
    process never confirmed one: no command again, the robot damped.)"""
    rng = np.random.default_rng(6)
    clock = ControlClock()
    source_s, stamps = 0.0, []
    for k in range(1600):  # 8 s of wall time in 5 ms steps
        mono = k * 0.005
        if 2.0 <= mono < 2.6:
            continue  # nothing published: the simulator stands still
        source_s += 0.005 * (1.0 if mono < 2.0 else 0.4)
        delay = rng.uniform(0, 0.002) if mono < 2.0 else 0.06 - (mono % 0.06)  # released every 60 ms
        clock.put(round(source_s * 1e9), mono + delay)
        timing = clock.poll(mono + delay)
        if timing.due:
            stamps.append((mono, timing.stamp_ns))
    after = np.array([s for m, s in stamps if m > 2.9])  # ticks again within 0.3 s of the simulator's return
    assert len(after) > 0.8 * (source_s - 2.0 - 0.3 * 0.4) / 0.02
    assert np.all(np.diff(after) > 0) and np.all(np.diff(after) % PERIOD_NS == 0)  # on the grid, in order
    assert set(clock.refused) == {"unconfirmed"} and clock.relocks == 0, clock.refused  # before the first lock only


def test_the_time_to_the_next_tick_is_told_for_a_caller_woken_early():
    clock = ControlClock()
    assert clock.until_next_s(0.0) is None  # no sample yet
    for k in range(60):  # a source 1 s ahead of the monotonic clock, a sample every 5 ms
        clock.put(round((1.0 + k * 0.005) * 1e9), k * 0.005)
    timing = clock.poll(0.3)  # source time 1.3 s: a tick of the 20 ms grid, due
    assert timing.due and timing.stamp_ns == 1_300_000_000
    assert clock.until_next_s(0.3) == pytest.approx(0.02, abs=1e-6)
    assert clock.until_next_s(0.3195) == pytest.approx(0.0005, abs=1e-6)
    assert clock.until_next_s(0.321) == pytest.approx(-0.001, abs=1e-6)  # past it: the caller is late
