"""The policy's tick delays as its diagnostics show them (control/tick_delays.py)."""

from __future__ import annotations

import pytest

from g1_teleop.control.tick_delays import TickDelays


def test_a_window_gives_each_delay_in_ms_and_counts_the_late_wakes() -> None:
    delays = TickDelays(window_s=0.0)
    assert delays.values() == {}  # no tick yet
    for i in range(100):  # late 0..1.98 ms (one early start: 0), take 1 ms, step 2..2.99 ms
        delays.record(late_s=i * 2e-5 if i else -5e-6, take_s=1e-3, step_s=2e-3 + i * 1e-5, woke_late=i >= 97)
    figures = delays.values()
    assert figures["ticks"] == 100 and figures["tick_late_wakes"] == 3
    assert figures["tick_late_max_ms"] == pytest.approx(1.98) and figures["tick_late_p50_ms"] == pytest.approx(0.99)
    assert figures["tick_take_p99_ms"] == pytest.approx(1.0)
    assert figures["tick_step_p50_ms"] == pytest.approx(2.5) and figures["tick_step_max_ms"] == pytest.approx(2.99)
    delays.record(late_s=0.004, take_s=0.0, step_s=0.001, woke_late=True)
    assert delays.values() == {**figures, "ticks": 1, "tick_late_wakes": 1, **{
        f"tick_{name}_{stat}_ms": value for name, value in (("late", 4.0), ("take", 0.0), ("step", 1.0))
        for stat in ("p50", "p99", "max")}}  # the next window holds only its own ticks


def test_a_call_within_the_window_repeats_the_last_figures() -> None:
    delays = TickDelays(window_s=3600.0)
    delays.record(late_s=0.001, take_s=0.0, step_s=0.001, woke_late=False)
    assert delays.values() == {}  # the first window is not over
