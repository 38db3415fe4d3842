"""`g1-teleop topic hz`'s statistics over a sliding window of arrival times (ROS-free)."""

import numpy as np
import pytest

from g1_teleop.tools.topic_rate import RateWindow


def test_a_steady_stream_gives_its_rate_and_no_spread() -> None:
    rates = RateWindow()
    for k in range(101):
        rates.add(10.0 + 0.02 * k)
    figures = rates.figures()
    assert figures.rate_hz == pytest.approx(50.0)
    assert figures.min_s == pytest.approx(0.02) and figures.max_s == pytest.approx(0.02)
    assert figures.std_s == pytest.approx(0.0, abs=1e-9) and figures.periods == 100 and rates.received == 101
    assert figures.line().startswith("average rate: 50.00 Hz   period min 20.00 ms  max 20.00 ms  std 0.00 ms")


def test_the_window_keeps_the_latest_periods_only() -> None:
    rates = RateWindow(window=10)
    t = np.concatenate([np.arange(20) * 0.1, 1.9 + np.arange(1, 11) * 0.005])  # 10 Hz, then 200 Hz
    for value in t:
        rates.add(float(value))
    figures = rates.figures()
    assert figures.periods == 10 and figures.rate_hz == pytest.approx(200.0)


def test_jitter_shows_in_min_max_and_std() -> None:
    rates = RateWindow()
    periods = [0.004, 0.006] * 50
    for t in np.concatenate([[0.0], np.cumsum(periods)]):
        rates.add(float(t))
    figures = rates.figures()
    assert figures.rate_hz == pytest.approx(200.0)
    assert (figures.min_s, figures.max_s, figures.std_s) == pytest.approx((0.004, 0.006, 0.001))


def test_no_figures_before_two_messages_and_a_window_of_at_least_one() -> None:
    rates = RateWindow()
    assert rates.figures() is None
    rates.add(1.0)
    assert rates.figures() is None
    with pytest.raises(ValueError, match="at least 1"):
        RateWindow(window=0)
