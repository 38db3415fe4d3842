"""The host's steal time beside a timing figure (tools.stolen_time), checked against the kernel's own counter."""

from __future__ import annotations

import os
import time
from collections import namedtuple
from unittest import mock

import pytest

from g1_teleop.tools import stolen_time
from g1_teleop.tools.stolen_time import StolenTime

Times = namedtuple("Times", "user system idle steal")


def _proc_stat_steal_s() -> float:
    """/proc/stat's 'cpu' line, 8th value: steal time of every core, in clock ticks (proc(5))."""
    with open("/proc/stat") as stat:
        fields = stat.readline().split()
    assert fields[0] == "cpu"
    return int(fields[8]) / os.sysconf("SC_CLK_TCK")


def test_the_steal_over_a_window_in_percent_of_one_core_each_reading_from_the_last() -> None:
    steal = iter([10.0, 10.5, 10.5])  # s, all cores summed
    clock = iter([100.0, 110.0, 115.0])  # s, monotonic
    with mock.patch.object(stolen_time.psutil, "cpu_times", lambda: Times(0, 0, 0, next(steal))), \
            mock.patch.object(stolen_time.time, "monotonic", lambda: next(clock)):
        stolen = StolenTime()
        assert stolen.cpu_percent() == 5.0  # 0.5 s of 10 s
        assert stolen.cpu_percent() == 0.0  # none since


def test_no_steal_field_is_none_taken() -> None:  # (psutil reports steal on Linux only)
    with mock.patch.object(stolen_time.psutil, "cpu_times", lambda: namedtuple("T", "user idle")(1.0, 2.0)):
        assert StolenTime().cpu_percent() == 0.0


def test_it_reads_the_kernels_counter_in_seconds() -> None:
    before_s, start_s = _proc_stat_steal_s(), time.monotonic()
    stolen = StolenTime()
    time.sleep(0.5)
    percent = stolen.cpu_percent()
    kernel = 100.0 * (_proc_stat_steal_s() - before_s) / (time.monotonic() - start_s)
    # the same counter read a few µs apart: one clock tick (10 ms at USER_HZ 100) over the 0.5 s at most
    assert percent == pytest.approx(kernel, abs=100.0 * 2 / os.sysconf("SC_CLK_TCK") / 0.5)
    assert 0.0 <= percent <= 100.0 * os.cpu_count()
