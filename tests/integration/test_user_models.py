"""The whole simulated graph on the model files users bring (Unitree's official scene, which includes the robot,
and the G1 with Dex3 hands), and a model that cannot be used refused before any node starts."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from support.shared_data import OFFICIAL_MODELS, shared_path

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("name", ["scene_29dof.xml", "g1_body29_hand14.xml"])
def test_the_graph_runs_on_official_model_files(sim_job, name: str) -> None:
    model = shared_path(OFFICIAL_MODELS / name)
    run = sim_job("--duration", "3", "--model", str(model), timeout_s=300, name=name)
    summary = run.summary
    log = (run.out / "nodes.log").read_text()
    assert summary["failure"] is None and summary["nodes_alive"] == summary["nodes_total"], log[-3000:]
    assert Path(summary["model"]).resolve() == model.resolve()
    assert not summary["fell"] and summary["pelvis_min_z_m"] > 0.7
    assert summary["left_wrist_err_p95_m"] < 0.02 and summary["right_wrist_err_p95_m"] < 0.02
    assert "Traceback" not in (run.out / "nodes.log").read_text()


def test_an_unusable_model_is_refused_in_one_line_with_a_summary(ros_domain, tmp_path: Path) -> None:
    other = tmp_path / "arm.xml"
    other.write_text('<mujoco><worldbody><body name="a"><joint name="j" type="hinge"/><geom size="0.1"/></body>'
                     '</worldbody></mujoco>')
    out = tmp_path / "run"
    command = [sys.executable, "-m", "g1_teleop.tools.cli", "sim", "--model", str(other), "--out", str(out)]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stdout + proc.stderr
    lines = [line for line in proc.stdout.splitlines() if line.startswith("cannot start:")]
    assert len(lines) == 1 and str(other) in lines[0] and "29 of the 29 G1 joints are missing" in lines[0], proc.stdout
    summary = json.loads((out / "summary.json").read_text())
    assert summary["failure"] == lines[0] and summary["nodes_alive"] == 0
