"""Latency per hop and loop figures (tools/latency.py, tools/bag_analysis.py) from bags of made-up stamps and
publish times with known answers."""

from __future__ import annotations

import json

import numpy as np
import pytest

from g1_teleop.tools.bag_analysis import diagnostics_events, mode_timeline, periods, read_run_bag, real_time
from g1_teleop.tools.latency import GOALS_MS, HOPS, LowCmdWrites, clock_kind, hop_latencies, measure, tick_grid
from support.synthetic_bag import MS, T0, lockstep_bag, real_graph_bag


def test_a_real_graph_hop_by_hop(tmp_path):
    delays = (0.0, 0.3, 0.8, 0.1)
    expected = real_graph_bag(tmp_path / "bag", ticks=50, delays_ms=delays)
    bag = read_run_bag(tmp_path / "bag")
    result = hop_latencies(bag)
    assert result.clock == clock_kind(bag) == "system clock"
    for hop in ("operator_to_xr", "xr_to_arm_target"):
        assert result.ms[hop] == pytest.approx(np.full(len(result.ms[hop]), expected[hop]), abs=1e-6)
    d = np.array([delays[j % 4] for j in range(1, 50)])
    assert result.counts["samples_used_by_a_command"] == 49
    assert result.ms["arm_target_to_tick"] == pytest.approx(np.full(49, 7.5), abs=0.02)  # the wait for the tick
    assert result.ms["tick_to_command"] == pytest.approx(d + 0.2, abs=0.02)  # the grid is the due times
    assert result.ms["operator_to_command"] == pytest.approx(d + 10.7, abs=1e-6)
    assert result.ms["operator_to_command_without_wait"] == pytest.approx(d + 3.2, abs=0.02)
    figures = result.figures()
    entry = figures["hops"]["operator_to_command_without_wait"]
    assert entry["p50_ms"] == pytest.approx(np.percentile(d + 3.2, 50), abs=0.02)
    assert entry["p99_ms"] == pytest.approx(np.percentile(d + 3.2, 99), abs=0.02)
    assert entry["goal_p99_ms"] == GOALS_MS["operator_to_command_without_wait"] and entry["goal_met"] is True
    lowcmd = figures["hops"]["command_to_lowcmd"]
    assert lowcmd["measured"] is False and "--robot-interface" in lowcmd["why"]
    assert set(figures["hops"]) == set(HOPS)
    json.dumps(figures)


def test_the_timer_grid_is_the_lower_envelope_of_the_stamps():
    due = T0 + np.arange(100, dtype=np.int64) * 20 * MS
    late = np.tile([0, 300_000, 800_000, 50_000], 25)
    late[37] = 5 * MS  # one very late tick
    grid = tick_grid(due + late)
    assert np.abs(grid - due).max() < 20_000  # within 20 µs


def test_lockstep_waits_for_no_tick_and_ignores_republications(tmp_path):
    expected = lockstep_bag(tmp_path / "bag")
    bag = read_run_bag(tmp_path / "bag")
    result = hop_latencies(bag)
    assert result.clock == "lockstep simulation"
    for hop, value in expected.items():
        assert result.ms[hop] == pytest.approx(np.full(len(result.ms[hop]), value), abs=1e-6), hop
        assert len(result.ms[hop]) == 40


def test_lowcmd_hops_match_commands_by_their_arm_targets(tmp_path):
    from g1_teleop.core.robot_description import ARM_INDICES
    from support.synthetic_bag import SyntheticBag

    bag_writer = SyntheticBag(tmp_path / "bag")
    arm = list(ARM_INDICES)
    default = bag_writer.robot.default_q
    t_low, q_low, prev = [], [], default
    for j in range(1, 30):
        c = T0 + j * 20 * MS
        q = default.copy()
        q[arm] += 0.001 * j  # new arm targets each command
        s = c - 4 * MS
        bag_writer.wrists(s, s + MS, s + MS)
        bag_writer.arm_target(s, s + 2 * MS, q=q[arm])
        bag_writer.joints("/joint_command", c, c + 100_000, q=q)
        bag_writer.trace(c, s, c + 100_000)
        for tick in range(10):  # the bridge's 2 ms LowCmds: the new targets from the first tick ≥ 1.5 ms after
            t = c + tick * 2 * MS + 500_000
            t_low.append(t)
            q_low.append(q if t >= c + 100_000 + 1_500_000 else prev)
        prev = q.copy()
    bag_writer.close()
    arrivals = LowCmdWrites(np.array(t_low, dtype=np.int64), np.array(q_low))
    result = hop_latencies(read_run_bag(tmp_path / "bag"), arrivals, bag_writer.robot.joint_names)
    # the first LowCmd at or after publish + 1.5 ms: c + 2.5 ms → 2.4 ms after the publish at c + 0.1 ms
    assert result.ms["command_to_lowcmd"] == pytest.approx(np.full(29, 2.4))
    assert result.ms["operator_to_lowcmd"] == pytest.approx(np.full(29, 6.5))  # from s = c − 4 ms
    assert result.counts["commands_matched_to_a_lowcmd"] == 29 and result.counts["commands_not_carried"] == 0


def test_loop_periods_jitter_modes_events_and_real_time(tmp_path):
    real_graph_bag(tmp_path / "bag", ticks=50, delays_ms=(0.0, 0.3, 0.8, 0.1))
    bag = read_run_bag(tmp_path / "bag")
    loop = periods(bag, "joint_command", T0)
    # publish times follow the delays: periods 20 + d(j) − d(j−1) ms
    d = np.array([(0.0, 0.3, 0.8, 0.1)[j % 4] for j in range(1, 50)])
    assert loop.nominal_ms == pytest.approx(20 + np.median(np.diff(d)))
    assert loop.wall_ms == pytest.approx(20 + np.diff(d))
    figures = loop.figures()
    assert figures["joint_command_period_max_ms"] == pytest.approx(20.5)
    assert figures["joint_command_jitter_p99_ms"] == pytest.approx(
        np.percentile(np.abs(np.diff(d) - np.median(np.diff(d))), 99), abs=1e-3)
    states = periods(bag, "joint_states", T0)
    assert states.nominal_ms == pytest.approx(10.0) and states.wall_ms == pytest.approx(np.full(101, 10.0))
    assert mode_timeline(bag, T0) == [(0.0, "SQUAT")]
    events = diagnostics_events(bag, T0)
    assert [(e.level, e.message.split(":")[0]) for e in events] == [(0, "WAIT_FOR_STATE"), (1, "DAMP")]
    rt = real_time(bag, T0)
    assert rt.overall == pytest.approx(1.0) and rt.factor == pytest.approx(np.ones(len(rt.factor)))


def test_a_simulation_runs_at_its_real_time_factor(tmp_path):
    lockstep_bag(tmp_path / "bag", ticks=120)  # 20 ms of simulation per 50 ms of wall time
    rt = real_time(read_run_bag(tmp_path / "bag"), 0)
    assert rt.overall == pytest.approx(0.4) and rt.factor == pytest.approx(np.full(len(rt.factor), 0.4), rel=0.05)
    assert len(rt.factor) == 5


def test_measure_a_bag_and_its_errors(tmp_path):
    real_graph_bag(tmp_path / "bag", ticks=20)
    figures = measure(str(tmp_path / "bag"))
    assert figures["source"] == "bag" and figures["hops"]["operator_to_command"]["measured"]
    with pytest.raises(ValueError, match="--robot-interface listens to a running robot"):
        measure(str(tmp_path / "bag"), robot_interface="lo")
