"""Fast, noisy wrist motion through the simulation graph (lockstep, on the gantry): the scenario
config/scenarios/noisy.yaml puts 5 mm RMS jitter on every wrist sample and 200 ms tracking dropouts every
2.6 s on top of moves twice as fast as the default scenario's. The arms stay smooth and follow both the
samples they get and the operator's true hand."""

from __future__ import annotations

import numpy as np
import pytest

from g1_teleop.core.paths import scenario_path
from g1_teleop.core.robot_description import ARM_INDICES
from g1_teleop.operator.scenario import Scenario
from g1_teleop.tools.run_analysis import reached_wrists
from support.checks import check_arm_slew, check_recorded, check_wrist_tracking

pytestmark = pytest.mark.integration


def test_noisy_fast_wrists_keep_the_arms_smooth_and_on_track(sim_job, fk):
    scenario = Scenario.load(scenario_path("noisy"))
    assert scenario.tracking is not None and scenario.tracking.jitter_m == 0.005
    assert scenario.tracking.dropout_s == 0.2
    run = sim_job("--scenario", "noisy")
    assert run.summary["nodes_alive"] == run.summary["nodes_total"] and run.summary["fell"] is False, run.summary
    rec = run.recording()
    failures = (check_recorded(rec, min_sim_time_s=scenario.duration)
                + check_arm_slew(rec, max_step_rad=0.01)
                + check_wrist_tracking(rec, fk, max_p95_m=0.02, settle_s=1.0))  # against the samples it got
    assert not failures, "\n".join(failures)

    # Smooth: no measured arm joint velocity above 2 rad/s, at any time.
    arm_speed = np.abs(rec.state_dq[:, list(ARM_INDICES)])
    assert arm_speed.max() < 2.0, f"arm joint velocity {arm_speed.max():.2f} rad/s"

    # On track against the operator's true hand (the scenario without its tracker noise): the jitter is
    # not followed and the dropouts are caught up.
    truth = scenario.clean()
    left, right = reached_wrists(rec, fk)
    settled = rec.state_t >= rec.state_t[0] + 1.0
    errors = []
    for t, reached_left, reached_right in zip(rec.state_t[settled], left[settled], right[settled], strict=True):
        sample = truth.sample(t - rec.state_t[0])
        errors.append([np.linalg.norm(reached_left - sample.pelvis_T_left_wrist[:3, 3]),
                       np.linalg.norm(reached_right - sample.pelvis_T_right_wrist[:3, 3])])
    p95 = np.percentile(np.array(errors), 95, axis=0)
    assert p95.max() < 0.02, f"wrist error to the true hand p95 {p95 * 1e3} mm"
