"""The simulation graph end to end: four nodes as separate processes over DDS, lockstep, the built-in
controller standing free (no gantry).

Runs the main job (`g1-teleop sim`) for 20 s of simulated time on the default scenario and judges the
recording with the same checks the launch_testing test uses.
"""

from __future__ import annotations

import pytest

from g1_teleop.tools.bag_analysis import diagnostics_values, read_run_bag
from support.checks import check_arm_slew, check_pelvis_above, check_recorded, check_wrist_tracking

pytestmark = pytest.mark.integration

DURATION_S = 20.0


def test_sim_job_tracks_the_default_scenario(sim_job, fk):
    run = sim_job("--duration", str(DURATION_S))
    out, summary = run.out, run.summary
    assert f"run directory: {out.resolve()}" in run.stdout
    for key in ("sim_time_s", "wall_time_s", "realtime_factor", "gantry", "fell", "pelvis_min_z_m",
                "commands_published", "nodes_alive", "left_wrist_err_p50_m", "left_wrist_err_p95_m",
                "left_wrist_err_max_m", "right_wrist_err_p95_m"):
        assert key in summary, f"summary.json lacks {key}"
    assert summary["nodes_alive"] == summary["nodes_total"], summary
    assert summary["controller"] == "builtin" and summary["gantry"] is False and summary["fell"] is False
    assert summary["commands_published"] >= DURATION_S / 0.02 - 2
    for png in ("wrist_tracking.png", "arm_joints.png"):
        assert (out / png).stat().st_size > 10_000

    rec = run.recording()
    failures = (
        check_recorded(rec, min_sim_time_s=DURATION_S)
        + check_wrist_tracking(rec, fk, max_p95_m=0.02, settle_s=1.0)
        + check_arm_slew(rec, max_step_rad=0.01)
        + check_pelvis_above(rec, min_z_m=0.7)
    )
    assert not failures, "\n".join(failures)
    # Lockstep: one command per control period, each answering the state of that period.
    assert rec.command_t[1] - rec.command_t[0] == pytest.approx(0.02)
    # Every command traces back to the operator sample of its period.
    assert len(rec.trace_t) > 0
    assert max(abs(rec.trace_t - rec.trace_origin_t)) < 1e-9


def test_sim_job_in_real_time(sim_job, fk):
    run = sim_job("--duration", "5", "--realtime", timeout_s=300)
    summary = run.summary
    assert summary["lockstep"] is False and summary["nodes_alive"] == summary["nodes_total"], summary
    assert not summary["fell"], (
        summary, (run.out / "nodes.log").read_text()[-3000:])
    rec = run.recording()
    # Real time on a loaded 2-core machine lags (6 processes): lockstep runs hold the 2 cm figure, this run
    # shows that the mode works. (On a machine ~2.5× slower than the usual one — Python, MuJoCo — the graph's
    # commands came at 35 Hz and the wrists trailed by p95 27-58 mm.)
    failures = (check_recorded(rec, min_sim_time_s=5.0) + check_wrist_tracking(rec, fk, max_p95_m=0.08, settle_s=1.0)
                + check_arm_slew(rec, max_step_rad=0.01))
    assert not failures, "\n".join(failures)
    # The policy's diagnostics say how its ticks kept time (the figures of its last window, in the run's bag).
    ticks = diagnostics_values(read_run_bag(run.out / "bag"), "/policy")
    assert int(ticks.get("ticks", 0)) > 0, ticks
    for part in ("late", "take", "step"):
        p50, p99, most = (float(ticks[f"tick_{part}_{stat}_ms"]) for stat in ("p50", "p99", "max"))
        assert 0.0 <= p50 <= p99 <= most < 1000.0, ticks
    assert float(ticks["tick_step_p50_ms"]) > 0.0 and 0 <= int(ticks["tick_late_wakes"]) <= int(ticks["ticks"])
