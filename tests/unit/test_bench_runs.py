"""`g1-teleop bench NAME --runs N`: a benchmark repeated, judged on its spread (tools.bench.figures.across_runs)."""

from __future__ import annotations

import json
import os
import sys
from unittest import mock

import pytest

from g1_teleop.tools.bench.figures import across_runs
from g1_teleop.tools.cli import build_parser
from g1_teleop.tools.cli import main as cli_main


def test_median_min_and_max_of_each_numeric_figure_every_run_gave() -> None:
    runs = [{"jitter_p99_ms": 0.9, "commands": 500, "backend": "onnx", "only_here": 1.0},
            {"jitter_p99_ms": 6.9, "commands": 498, "backend": "onnx"},
            {"jitter_p99_ms": 1.4, "commands": 500, "backend": "onnx"}]
    result = across_runs(runs)
    assert result["runs"] == 3
    assert result["median"] == {"jitter_p99_ms": 1.4, "commands": 500.0}
    assert result["min"] == {"jitter_p99_ms": 0.9, "commands": 498.0}
    assert result["max"] == {"jitter_p99_ms": 6.9, "commands": 500.0}
    assert result["each"] == runs  # every run kept, in order: none dropped


def test_no_run_is_an_error() -> None:
    with pytest.raises(ValueError, match="at least one run"):
        across_runs([])


@pytest.mark.parametrize("runs", ["0", "-1", "two"])
def test_runs_must_be_a_whole_number_of_one_or_more(runs: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["bench", "sim", "--runs", runs])
    assert "expected a whole number of 1 or more" in capsys.readouterr().err


def test_a_benchmark_run_twice_reports_both_runs_and_their_spread(capsys: pytest.CaptureFixture[str]) -> None:
    with mock.patch.dict(os.environ):  # (the command sets this process's ROS discovery variables)
        assert cli_main(["bench", "sim", "--runs", "2", "--json"]) == 0
    captured = capsys.readouterr()
    result = json.loads(captured.out)
    assert result["runs"] == 2 and len(result["each"]) == 2
    periods = [run["control_period_p50_ms"] for run in result["each"]]
    assert result["min"]["control_period_p50_ms"] == min(periods)
    assert result["max"]["control_period_p50_ms"] == max(periods)
    assert result["median"]["periods"] == 1000
    assert "(run 1 of 2)" in captured.err and "(run 2 of 2)" in captured.err


def test_a_run_that_fails_keeps_the_figures_of_the_runs_before_it(capsys: pytest.CaptureFixture[str]) -> None:
    from g1_teleop.tools.bench.figures import BenchError

    outcomes = iter([{"jitter_p99_ms": 0.4}, {"jitter_p99_ms": 0.6}, BenchError("no answer from hw_bridge/activate")])

    def one_run() -> dict[str, float]:
        outcome = next(outcomes)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    with mock.patch("g1_teleop.tools.bench.benchmark", return_value=one_run):
        assert cli_main(["bench", "policy", "--runs", "3", "--json"]) == 1
    captured = capsys.readouterr()
    assert "(run 3 of 3): no answer from hw_bridge/activate" in captured.err
    assert "the figures of the 2 run(s) before it" in captured.err
    result = json.loads(captured.out)
    assert result["runs"] == 2 and result["median"] == {"jitter_p99_ms": 0.5}


@pytest.mark.parametrize("name", ["policy", "lowcmd", "damping"])
def test_a_bench_of_the_robots_graph_without_the_robot_sdk_says_how_to_install_it_before_it_starts(
        name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from g1_teleop.tools.bench import damping, lowcmd, policy
    from g1_teleop.tools.bench.figures import BenchError

    monkeypatch.setitem(sys.modules, "unitree_sdk2py", None)  # not installed
    bench = {"policy": policy.bench_policy, "lowcmd": lowcmd.bench_lowcmd, "damping": damping.bench_damping}[name]
    monkeypatch.setattr("g1_teleop.core.robot_description.load_robot", mock.Mock(side_effect=AssertionError("started")))
    with pytest.raises(BenchError, match=r"unitree_sdk2py is not installed: run scripts/install_robot_sdk.sh"):
        bench()
