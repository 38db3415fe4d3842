"""A stream decimated to an average rate: at most one a sample, a gap not made up for."""

import numpy as np
import pytest

from g1_teleop.core.decimator import Decimator


def test_a_500_hz_stream_is_kept_at_200_hz_on_average():
    due = Decimator(200.0)
    times = 10.0 + 0.002 * np.arange(5000)  # 10 s of LowStates
    kept = [t for t in times if due(t)]
    assert len(kept) / 10.0 == pytest.approx(200.0, rel=0.01)
    assert max(np.diff(kept)) <= 0.006 + 1e-9  # every 2 or 3 samples


def test_a_gap_is_not_made_up_for():
    due = Decimator(100.0)
    assert due(1.0)
    kept = [t for t in 2.0 + 0.002 * np.arange(500) if due(t)]  # after a second without samples
    assert kept[:4] == pytest.approx([2.0, 2.002, 2.004, 2.01])  # one period back, then on schedule
    assert len(kept) == 102


def test_a_clock_that_goes_back_restarts_the_schedule():
    due = Decimator(50.0)
    assert len([t for t in 100.0 + 0.005 * np.arange(400) if due(t)]) == pytest.approx(100, abs=2)
    kept = [t for t in 0.005 * np.arange(9) if due(t)]  # the simulation restarted at 0
    assert kept == pytest.approx([0.0, 0.02, 0.04])

