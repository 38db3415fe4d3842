import pytest

from g1_teleop.tools.bench.graph import PERIOD_NS, _figures

T0 = 1_800_000_000_000_000_000  # wall ns
HOP_NS = {"joint_states→xr/left_wrist": 1_000_000, "xr/left_wrist→teleop/arm_target": 3_000_000,
          "teleop/arm_target→joint_command": 2_000_000, "joint_command→joint_states": 4_000_000}  # 10 ms a period


def lockstep_run(periods: int, lost: set[tuple[str, int]] = frozenset()) -> dict[str, dict[int, int]]:
    """Publish times of a lockstep graph whose periods take 10 ms of wall time (real-time factor 2)."""
    published: dict[str, dict[int, int]] = {t: {} for t in ("joint_states", "xr/left_wrist", "teleop/arm_target",
                                                              "joint_command")}
    wall = T0
    for k in range(periods):
        stamp = k * PERIOD_NS
        for hop, topic in zip(HOP_NS, published, strict=True):
            if (topic, k) not in lost:
                published[topic][stamp] = wall
            wall += HOP_NS[hop]
    return published


def test_each_hop_and_node_time_per_period():
    published = lockstep_run(200)
    cpu = [{"sim_bridge": 1.0, "policy": 2.0}, {"sim_bridge": 1.5, "policy": 2.2}]
    figures = _figures(published, cpu, [T0, T0 + 199 * 10_000_000])
    assert figures["realtime_factor"] == pytest.approx(2.0)
    assert figures["periods"] == 199
    assert figures["hop_xr_input_p50_ms"] == pytest.approx(1.0)
    assert figures["hop_retarget_p99_ms"] == pytest.approx(3.0)
    assert figures["hop_policy_p50_ms"] == pytest.approx(2.0)
    assert figures["hop_sim_bridge_p50_ms"] == pytest.approx(4.0)
    assert figures["period_wall_p50_ms"] == pytest.approx(10.0)
    assert figures["cpu_per_period_sim_bridge_ms"] == pytest.approx(500 / 199, abs=0.01)
    assert figures["cpu_per_period_total_ms"] == pytest.approx(700 / 199, abs=0.01)


def test_periods_with_a_message_not_heard_are_left_out_of_the_hops():
    published = lockstep_run(100, lost={("xr/left_wrist", 10), ("joint_command", 20)})
    figures = _figures(published, [{"a": 0.0}, {"a": 1.0}], [T0, T0 + 99 * 10_000_000])
    # 99 periods have a next joint_states inside the run; two of them lost a message here
    assert figures["periods_with_every_hop"] == 97
    assert figures["hop_retarget_p50_ms"] == pytest.approx(3.0)
