"""Diagnostics figures per window (core/figure_window.py), and hw_bridge's process figures built on it."""

from __future__ import annotations

import time

import pytest

from g1_teleop.core.figure_window import FigureWindow
from g1_teleop.ros.diagnostics import ProcessFigures


def test_a_window_closes_once_its_time_is_over_and_has_figures() -> None:
    window, closed = FigureWindow(window_s=0.05), []

    def close(elapsed_s: float) -> dict[str, object] | None:
        closed.append(elapsed_s)
        return None if len(closed) == 1 else {"n": len(closed)}

    assert window.values(close) == {} and closed == []  # (too early: not asked)
    time.sleep(0.06)
    assert window.values(close) == {}  # over, but nothing to report: the window goes on
    assert window.values(close) == {"n": 2} and closed[1] >= 0.05  # (its elapsed time spans both calls)
    assert window.values(close) == {"n": 2} and len(closed) == 2  # asked again within the next window: repeated


def test_process_figures_give_the_windows_cpu_share_and_longest_gap() -> None:
    figures = ProcessFigures("joint_command")
    start = time.monotonic()
    for gap_s in (0.0, 0.01, 0.03, 0.02):
        figures.event(start + gap_s)
    end = time.monotonic() + 0.55
    while time.monotonic() < end:  # busy: this process's CPU share ≈ 100 %
        pass
    values = figures.values()
    assert values["joint_command_gap_max_ms"] == pytest.approx(20.0)
    assert 50.0 < values["process_cpu_percent"] <= 110.0
    time.sleep(0.55)  # idle: the next window's share is low, its gap 0 (no events)
    assert figures.values()["process_cpu_percent"] < 20.0 and figures.values()["joint_command_gap_max_ms"] == 0.0
