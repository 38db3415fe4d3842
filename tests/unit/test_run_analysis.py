"""Run figures on made-up recordings whose answers are known: arm target steps per control tick, and the lag at
which the reached wrists fit their targets best."""

from __future__ import annotations

import numpy as np
import pytest

from g1_teleop.core.robot_description import ARM_INDICES
from g1_teleop.tools.run_analysis import arm_target_steps, tracking_lag, wrist_errors
from g1_teleop.tools.run_recording import Recording


def commands(t: np.ndarray, arm: np.ndarray) -> Recording:
    q = np.zeros((len(t), 29))
    q[:, ARM_INDICES] = arm[:, None]
    return Recording(command_t=t, command_q=q, command_tau=np.zeros((len(t), 29)))


def test_a_step_over_skipped_ticks_counts_per_tick_and_a_jump_still_shows() -> None:
    t = np.array([0.0, 0.02, 0.04, 0.10, 0.12, 0.14])  # 0.04 → 0.10: two ticks missing
    arm = np.array([0.0, 0.01, 0.02, 0.05, 0.06, 0.11])  # 0.03 over 3 ticks; then 0.05 in one
    steps = arm_target_steps(commands(t, arm))
    np.testing.assert_allclose(steps, [0.01, 0.01, 0.01, 0.01, 0.05])


def fk_of_first_arm_joint(q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A made-up robot whose wrists sit at x = the first arm joint's angle (m)."""
    pose = np.eye(4)
    pose[0, 3] = q[ARM_INDICES[0]]
    return pose, pose


@pytest.mark.parametrize("lag_s", [0.0, 0.12, 0.3])
def test_tracking_lag_finds_how_late_the_wrists_follow(lag_s: float) -> None:
    t = np.arange(0.0, 6.0, 0.005)
    path = lambda s: 0.2 * np.sin(2.0 * s)  # noqa: E731 (target x, m)
    q = np.zeros((len(t), 29))
    q[:, ARM_INDICES[0]] = path(t - lag_s)
    wrists = np.stack([path(t), np.zeros_like(t), np.zeros_like(t)], axis=1)
    rec = Recording(state_t=t, state_q=q, state_dq=np.zeros_like(q), wrist_t=t, wrist_left=wrists, wrist_right=wrists)
    found, errors = tracking_lag(rec, fk_of_first_arm_joint, settle_s=1.0, max_lag_s=0.5)
    assert found == pytest.approx(lag_s, abs=0.006)
    assert max(np.percentile(e, 95) for e in errors.values()) < 0.003
    if lag_s:  # at no lag the same run is off by the lag's worth of motion
        assert np.percentile(wrist_errors(rec, fk_of_first_arm_joint, settle_s=1.0)["left"], 95) > 0.03
