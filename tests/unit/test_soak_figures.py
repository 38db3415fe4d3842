"""The soak's figures: durations as typed, periods and misses of an arrival stream, memory growth."""

import pytest

from g1_teleop.tools.soak import _Arrivals, memory_growth_percent, parse_duration


def test_durations_as_an_operator_types_them():
    assert [parse_duration(t) for t in ("1h", "10m", "90s", "90", "1.5h")] == [3600, 600, 90, 90, 5400]
    for bad in ("", "0", "-5m", "1d", "h"):
        with pytest.raises(ValueError, match="positive number with h, m or s"):
            parse_duration(bad)


def test_periods_span_the_intervals_and_long_gaps_are_misses():
    arrivals = _Arrivals()
    arrivals.times = [0.0, 0.02, 0.04, 0.10]  # one 60 ms gap at 50 Hz
    first = arrivals.take(0.02, 1.5)
    assert first["count"] == 4 and first["misses"] == 1 and first["period_p99_ms"] == pytest.approx(59.2, abs=0.1)
    arrivals.times = [0.12]  # the period across the two intervals counts
    assert arrivals.take(0.02, 1.5) == {"count": 1, "period_p99_ms": 20.0, "misses": 0}
    assert arrivals.take(0.02, 1.5) == {"count": 0, "period_p99_ms": None, "misses": 0}


def test_memory_growth_from_the_first_interval_to_the_last():
    growth = memory_growth_percent({"policy": 200.0, "retarget": 100.0, "gone": 50.0},
                                   {"policy": 210.0, "retarget": 99.0})
    assert growth == {"policy": 5.0, "retarget": -1.0}
