"""The loop pacer: a pass every period of the monotonic clock, late passes caught up, a long lag restarted."""

import math

import pytest

from g1_teleop.core import realtime_loop
from g1_teleop.core.realtime_loop import Pacer


class FakeClock:
    """time.monotonic and time.sleep of a clock that moves only when slept on or told to."""

    def __init__(self, t: float = 100.0) -> None:
        self.t = t
        self.sleeps: list[float] = []

    def monotonic(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.t += seconds


@pytest.fixture
def clock(monkeypatch):
    fake = FakeClock()
    monkeypatch.setattr(realtime_loop, "time", fake)
    return fake


def test_passes_are_one_period_apart_whatever_the_work_took(clock):
    pacer = Pacer(0.002, max_lag_s=0.002)
    starts = []
    for work in (0.0005, 0.0015, 0.0):
        pacer.wait()
        starts.append(clock.t)
        clock.t += work
    assert starts == pytest.approx([100.002, 100.004, 100.006])


def test_a_late_pass_is_caught_up_without_sleeping(clock):
    pacer = Pacer(0.002, max_lag_s=0.01, start_s=clock.t)
    clock.t += 0.005  # a pass that overran by 1.5 periods
    pacer.wait()
    pacer.wait()
    assert clock.sleeps == [] and pacer.restarts == 0
    pacer.wait()  # due at 100.006: back on the grid
    assert clock.t == pytest.approx(100.006)


def test_a_lag_beyond_the_limit_restarts_the_pacing_from_now(clock):
    pacer = Pacer(0.002, max_lag_s=0.002)
    clock.t += 0.05  # a starved process
    pacer.wait()
    assert pacer.restarts == 1 and clock.sleeps == []
    pacer.wait()
    assert clock.t == pytest.approx(100.052)  # one period after the restart, not a burst of 24 passes


def test_without_a_lag_limit_every_pass_is_caught_up(clock):
    pacer = Pacer(0.002, max_lag_s=math.inf)
    clock.t += 0.05
    for _ in range(25):
        pacer.wait()
    assert sum(clock.sleeps) < 1e-9 and pacer.restarts == 0
    pacer.wait()
    assert clock.t == pytest.approx(100.052)


@pytest.mark.parametrize(("period_s", "max_lag_s"), [(0.0, 0.1), (math.nan, 0.1), (0.002, -1.0)])
def test_bad_arguments_are_refused(period_s, max_lag_s):
    with pytest.raises(ValueError):
        Pacer(period_s, max_lag_s)



def test_wait_until_sleeps_to_just_before_the_instant_and_spins_the_rest(monkeypatch):
    class Spun(FakeClock):  # each look at the clock moves it on 50 µs, as the spinning does
        def monotonic(self) -> float:
            self.t += 0.00005
            return self.t

    spun = Spun()
    monkeypatch.setattr(realtime_loop, "time", spun)
    reached = realtime_loop.wait_until(100.001, spin_s=0.0002)
    assert spun.sleeps == [pytest.approx(0.00075)]  # 1 ms away, less the spun 0.2 ms and the first look's 50 µs
    assert 100.001 <= reached < 100.001 + 0.00006
    before = spun.t
    assert realtime_loop.wait_until(99.0) == pytest.approx(before + 0.0001)  # past: two looks, no sleep
    assert len(spun.sleeps) == 1
