"""`g1-teleop soak` for 12 s in two intervals, as an operator runs it: the graph against the virtual robot comes up
ACTIVE by itself, every interval has its line of figures (every process's memory, hw_bridge's LowCmd process
included; the commands and the LowCmds that reached the robot; which processes run at real-time priority: none
unless asked, tests/integration/test_realtime_priority.py checks that one), and nothing trips."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.integration


def test_a_short_soak_reports_each_interval_and_nothing_trips(ros_domain):
    # The LowState timeout is 1 s here, not the bridge's 0.1 s: the virtual robot shares this small VM with the
    # graph and the suite, and the VM stalls processes for up to a second now and then (the bridge then damps, as
    # it must on a robot). What this checks is the soak's report and a graph that runs on.
    proc = subprocess.run([sys.executable, "-m", "g1_teleop.tools.cli", "soak", "--duration", "12s", "--interval",
                           "6s", "--ros-domain-id", str(ros_domain), "--robot-domain-id", str(ros_domain % 100 + 1),
                           "--state-timeout", "1.0", "--json"], capture_output=True, text=True, timeout=240)
    log = [line for line in proc.stderr.splitlines() if "virtual_robot status" not in line]
    assert proc.returncode == 0, f"{proc.stdout[-4000:]}\n" + "\n".join(log[-40:])
    lines = proc.stdout.strip().splitlines()
    assert lines[0].startswith("soak: ACTIVE against the virtual robot"), proc.stdout
    intervals = [json.loads(line) for line in lines[1:-1]]
    summary = json.loads(lines[-1])
    assert len(intervals) == summary["intervals"] == 2, proc.stdout
    for interval in intervals:
        assert interval["state"] == "ACTIVE" and interval["trips"] == 0, interval
        assert set(interval["rss_mb"]) == {"virtual_robot", "hw_bridge", "hw_bridge/lowcmd", "policy", "retarget",
                                           "xr_input", "robot_state"}, interval
        assert all(50 < mb < 2000 for mb in interval["rss_mb"].values()), interval
        assert interval["sched_fifo"] == [], interval  # normal scheduling unless --priority
        assert 0.0 <= interval["steal_cpu_percent"] <= 100.0 * os.cpu_count(), interval  # (every core at most)
        # 6 s at 50 Hz and at 500 Hz; on a loaded machine fewer, never none: a CI check on a machine ~2.5× slower
        # than the usual one counted 209 and 1370 (70 % and 46 %); a quarter of each is the floor
        assert interval["joint_command"]["count"] > 75 and interval["lowcmd"]["count"] > 750, interval
        ticks = interval["policy_ticks"]  # the policy's worst window of the interval (its diagnostics)
        assert set(ticks) == {"tick_late_p99_ms", "tick_late_max_ms", "tick_take_p99_ms", "tick_step_p99_ms"}, ticks
        assert 0.0 <= ticks["tick_late_p99_ms"] <= ticks["tick_late_max_ms"] < 1000.0, ticks
        assert ticks["tick_step_p99_ms"] > 0.0 and ticks["tick_take_p99_ms"] >= 0.0, ticks
    assert summary["safety_trips"] == 0 and summary["nodes_dead"] == [], summary
    assert set(summary["memory_growth_percent"]) == set(intervals[0]["rss_mb"])
