"""A 40 N lateral push on the pelvis for 0.2 s, while standing and while squatting, does not make the robot
fall: with the built-in controller and with OpenWBT's policies. The simulation graph in lockstep (separate
processes), the squat scenario, the pushes from the simulator's ``pushes`` schedule."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from g1_teleop.tools.run_analysis import pelvis_tilt

pytestmark = pytest.mark.integration

POLICIES = Path(__file__).resolve().parents[3] / "shared" / "policies" / "openwbt"
STANDING_PUSH_S, SQUATTING_PUSH_S = 5.0, 16.0  # the squat scenario holds the 0.494 m command over 15–18 s


@pytest.mark.parametrize("controller", ["builtin", "openwbt"])
def test_lateral_pushes_standing_and_squatting(sim_job, controller):
    extra = []
    if controller == "openwbt":
        if not (POLICIES / "squat.onnx").is_file():
            pytest.skip(f"OpenWBT policies not found at {POLICIES}: the reference data is not beside the repo")
        extra = ["--policy-dir", str(POLICIES)]
    run = sim_job("--controller", controller, *extra, "--scenario", "squat", "--duration", "18",
                  "--push", f"{STANDING_PUSH_S},0,40,0,0.2", "--push", f"{SQUATTING_PUSH_S},0,-40,0,0.2")
    summary = run.summary
    assert summary["gantry"] is False and len(summary["pushes"]) == 2
    assert summary["nodes_alive"] == summary["nodes_total"] and summary["fell"] is False, summary
    rec = run.recording()
    t, y, z = rec.odom_t, rec.odom_p[:, 1], rec.odom_p[:, 2]

    def window(start: float, end: float) -> np.ndarray:
        return (t >= start) & (t < end)

    before = window(STANDING_PUSH_S - 1.0, STANDING_PUSH_S)
    after = window(STANDING_PUSH_S, STANDING_PUSH_S + 3.0)
    moved = np.abs(y[after] - y[before].mean()).max()
    assert moved > 0.003, f"the push did not move the pelvis ({moved * 1e3:.1f} mm): was it applied?"
    assert z[after].min() > 0.7 and pelvis_tilt(rec.odom_q[after]).max() < 0.3
    squatting = window(SQUATTING_PUSH_S, 18.0)
    assert np.abs(z[squatting] - 0.5).max() < 0.05 and pelvis_tilt(rec.odom_q[squatting]).max() < 0.8
