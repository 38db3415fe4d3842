"""Fuzzing the policy's inputs with hypothesis while the real sim graph runs (g1_teleop.tools.fuzz, a smaller
seeded run of `g1-teleop bench fuzz`): nothing non-finite or outside the robot's limits reaches joint_command,
no node dies (a /clock with negative seconds included, which rclpy's time source refuses), the log stays
rate-limited, the commands keep their rate and the simulated robot keeps standing."""

from __future__ import annotations

import json

import pytest

from g1_teleop.tools.fuzz import PHASES, run_fuzz

pytestmark = pytest.mark.integration

MIN_COMMANDS_PER_SIM_S = 30.0
MAX_LOG_LINES_PER_S = 30  # the policy's: rate-limited request lines (3 per kind) and one warning per kind of refusal


def test_fuzzed_policy_inputs_reach_no_command_and_kill_no_node(ros_domain):
    figures = run_fuzz(messages_per_topic=300, seed=1, phases=("state", "operator"), templates=40,
                       domain_id=ros_domain, min_phase_s=6.0)
    log = "\n".join(figures["log"])
    summary = json.dumps({k: v for k, v in figures.items() if k != "log" and "_sent_" not in k}, indent=1)
    for phase, topics in (("state", PHASES["state"]), ("operator", PHASES["operator"])):
        for topic in topics:
            assert figures[f"{phase}_sent_{topic}"] >= 300, summary
        # Every command was checked against the robot's limits, and none broke them.
        assert figures[f"{phase}_commands_checked"] > 100, summary
        assert figures[f"{phase}_violations"] == 0, figures[f"{phase}_violation_examples"]
        # Rate-limited log; commands at ≥ 60 % of 50 Hz of the policy's clock, which is the simulation's: 30 a
        # wall second when the simulation keeps real time, fewer when a starved machine slows the simulation. This
        # catches a collapse (fuzzed wrists once cut arm targets to 30 %); the issue's 80 % is `bench fuzz`'s figure.
        # (On 2 cores, the five nodes and this fuzzer sharing them, 30 runs: 3 under 40 a simulated second, 37.6 and
        # 39.7, 33.7 with another test beside it; the policy's ticks then wait for a core: py-spy shows its floods'
        # callbacks at a few % of its time, its ticks at most of it.)
        assert figures[f"{phase}_log_lines_per_s_max_policy"] <= MAX_LOG_LINES_PER_S, f"{summary}\n{log}"
        assert figures[f"{phase}_joint_command_per_sim_s"] >= MIN_COMMANDS_PER_SIM_S, summary
        realtime = min(1.0, figures[f"{phase}_sim_realtime_factor"])
        assert figures[f"{phase}_joint_command_rate_hz"] >= MIN_COMMANDS_PER_SIM_S * realtime, summary
    # No node died; the negative /clock messages reached every node on sim time, which refused them.
    assert figures["node_deaths"] == 0 and set(figures["exit_codes"].values()) == {0}, f"{summary}\n{log}"
    assert {"policy", "retarget", "xr_input"} <= set(figures["state_nodes_that_refused_negative_clock"]), summary
    # Spoofed and malformed states are refused: the robot keeps standing. No mode flips (builtin: SQUAT only).
    assert not figures["state_fell"], summary
    assert figures["operator_mode_switches"] == 0, summary
    print(summary)
