"""`g1-teleop report` (tools/run_report.py) on bags of a made-up graph: every plot and the figures table are in
the page, a run directory's report shows the run, a cut bag is reported up to the cut and said at the top."""

from __future__ import annotations

import base64
import json
import re
import shutil

import pytest

from g1_teleop.core.rosbag import BagError
from g1_teleop.tools.run_report import PLOTS, default_output, write_report
from support.synthetic_bag import real_graph_bag


def figures_table(page: str) -> dict[str, str]:
    table = page.split("<table class='figures'>")[1].split("</table>")[0]
    return dict(re.findall(r"<tr><td>([^<]*)</td><td>([^<]*)</td></tr>", table))


def test_the_report_of_a_bag_has_each_plot_and_the_figures(tmp_path):
    real_graph_bag(tmp_path / "bag", ticks=50)
    path = write_report(tmp_path / "bag")
    assert path == tmp_path / "bag_report.html" == default_output(tmp_path / "bag")
    page = path.read_text()
    for stem, caption in PLOTS.items():
        match = re.search(rf"<h2>{re.escape(caption)}</h2><img id='{stem}' alt='[^']*' "
                          r"src='data:image/png;base64,([A-Za-z0-9+/=]+)'>", page)
        assert match, stem
        assert base64.b64decode(match.group(1))[:8] == b"\x89PNG\r\n\x1a\n"
    table = figures_table(page)
    for key in ("left_wrist_err_p50_m", "right_wrist_err_p95_m", "commands_published", "joint_command_period_p99_ms",
                "joint_command_jitter_p99_ms", "joint_states_jitter_p99_ms", "realtime_factor", "latency_clock",
                "operator_to_command_p99_ms", "operator_to_command_without_wait_p99_ms", "arm_target_to_tick_p50_ms"):
        assert key in table, key
    assert table["commands_published"] == "49" and table["latency_clock"] == "system clock"
    assert float(table["left_wrist_err_p50_m"]) >= 0  # the default pose against made-up targets: some error
    assert "Latency per hop (system clock)" in page and "not measured: the robot&#x27;s DDS is not in a bag" in page
    assert "DAMP: e-stop (service)" in page  # the safety event in the events table
    assert "class='problem'" not in page


def test_a_run_directory_report_shows_the_run_and_agrees_with_its_bag(tmp_path):
    run = tmp_path / "run"
    real_graph_bag(run / "bag", ticks=30)
    (run / "summary.json").write_text(json.dumps({"controller": "builtin", "lockstep": False, "failure": None}))
    page = write_report(run).read_text()
    assert (run / "report.html").is_file()
    assert "<h2>Run</h2>" in page and "<td>controller</td><td>builtin</td>" in page
    alone = write_report(run / "bag", tmp_path / "alone.html").read_text()
    assert figures_table(page) == figures_table(alone)


def test_a_cut_bag_is_reported_up_to_the_cut_and_an_unreadable_one_refused(tmp_path):
    real_graph_bag(tmp_path / "whole", ticks=50)
    mcap = next((tmp_path / "whole").glob("*.mcap"))
    cut = tmp_path / "cut"
    shutil.copytree(tmp_path / "whole", cut)
    data = mcap.read_bytes()
    (cut / mcap.name).write_bytes(data[: int(len(data) * 0.8)])
    page = write_report(cut).read_text()
    problem = re.search(r"<p class='problem'>([^<]*)</p>", page)
    assert problem and "is truncated at byte" in problem.group(1) and "the recording was cut" in problem.group(1)
    (cut / mcap.name).write_bytes(data[:100])
    with pytest.raises(BagError, match=r"is truncated at byte .* no complete message"):
        write_report(cut)
    with pytest.raises(FileNotFoundError, match="does not exist: give a run directory"):
        write_report(tmp_path / "nothing")
