"""The gains the simulator applies, read back from the torques it reports (tests/support/applied_gains.py), on the
Simulator core in-process: the method the integration tests use over DDS, checked against gains known exactly."""

from __future__ import annotations

import numpy as np
import pytest

from g1_teleop.core.limits import JointCommand
from g1_teleop.sim.simulator import SimConfig, Simulator
from support.applied_gains import EXCITED_KD_RTOL, EXCITED_KP_RTOL, Periods, excitation, fit_gains, torque_mismatch

WAIST = slice(12, 15)


def run_lockstep(robot, mj_model, gains: list[tuple[np.ndarray, np.ndarray]], ticks_each: int) -> Periods:
    """The excited robot on the gantry, ``ticks_each`` control periods with each (kp, kd) in turn; one row per
    period as sim_bridge publishes it (the state at its start and end, the torque of its last physics step)."""
    sim = Simulator(robot, mj_model, SimConfig(gantry=True))
    rows, start = [], sim.state()
    for k in range(ticks_each * len(gains)):
        q_target, dq_target, tau_ff = excitation(robot, k * sim.config.control_dt)
        kp, kd = gains[k // ticks_each]
        sim.step_control_period(JointCommand(q_target, dq_target, tau_ff, kp, kd))
        end = sim.state()
        rows.append((q_target, dq_target, tau_ff, start.dq, end.q, end.dq, end.tau))
        start = end
    return Periods.stack(rows)


@pytest.fixture(scope="module")
def stiff_waist(robot) -> tuple[np.ndarray, np.ndarray]:
    """unitree_rl_gym's preset: the waist at kp 900, kd 9, the rest at the default profile."""
    kp, kd = (g.copy() for g in robot.gains("default"))
    kp[WAIST], kd[WAIST] = 900.0, 9.0
    return kp, kd


def test_the_gains_are_solved_from_the_reported_torques(robot, mj_model, stiff_waist) -> None:
    kp, kd = stiff_waist
    periods = run_lockstep(robot, mj_model, [stiff_waist], ticks_each=175)[25:]  # after the fade-in
    fit = fit_gains(periods, 0.005, 0.02, robot.effort_limit)
    assert fit.used.min() == 150
    np.testing.assert_allclose(fit.kp, kp, rtol=EXCITED_KP_RTOL)
    np.testing.assert_allclose(fit.kd, kd, rtol=EXCITED_KD_RTOL)
    assert fit.residual_rms.max() < 0.5  # N·m: the PD law explains the torques


def test_a_change_of_gains_shows_in_the_first_period_it_applies_to(robot, mj_model, stiff_waist) -> None:
    default = robot.gains("default")
    periods = run_lockstep(robot, mj_model, [default, stiff_waist], ticks_each=100)
    before = fit_gains(periods[25:100], 0.005, 0.02, robot.effort_limit)
    after = fit_gains(periods[110:], 0.005, 0.02, robot.effort_limit)
    np.testing.assert_allclose(before.kp[WAIST], 300.0, rtol=EXCITED_KP_RTOL)
    np.testing.assert_allclose(after.kp[WAIST], 900.0, rtol=EXCITED_KP_RTOL)
    # Period by period: the last with the old gains is explained by them (to 0.2 N·m), the first with the new
    # ones better by the new (the sudden change spoils the interpolated velocity: ≈ 9 against 16 N·m here; one
    # period late, the old gains would explain it to 0.2 N·m and the new ones be ≈ 30 N·m off).
    last_old, first_new = periods[99:100], periods[100:101]
    assert np.abs(torque_mismatch(last_old, *default, 0.005, 0.02)[0, WAIST]).max() < 0.2
    assert (np.abs(torque_mismatch(first_new, *stiff_waist, 0.005, 0.02)[0, WAIST]).sum()
            < np.abs(torque_mismatch(first_new, *default, 0.005, 0.02)[0, WAIST]).sum())
