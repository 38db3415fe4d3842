"""Pass/fail checks of a simulated run, shared by the pytest integration test and the launch_testing
test (so both judge a run the same way). Each returns a list of failures (empty: pass). ROS-free."""

from __future__ import annotations

import numpy as np

from g1_teleop.tools.run_analysis import Fk, arm_target_steps, wrist_errors
from g1_teleop.tools.run_recording import Recording


def check_recorded(rec: Recording, min_sim_time_s: float) -> list[str]:
    failures = []
    if len(rec.state_t) == 0 or rec.state_t[-1] < min_sim_time_s:
        reached = rec.state_t[-1] if len(rec.state_t) else 0.0
        failures.append(f"simulation reached {reached:.2f} s, expected at least {min_sim_time_s} s")
    for name in ("command_t", "wrist_t", "odom_t"):
        if len(getattr(rec, name)) == 0:
            failures.append(f"nothing recorded for {name.removesuffix('_t')}")
    return failures


def check_wrist_tracking(rec: Recording, fk: Fk, max_p95_m: float, settle_s: float) -> list[str]:
    failures = []
    for side, err in wrist_errors(rec, fk, settle_s).items():
        if len(err) == 0:
            failures.append(f"{side} wrist: no samples after {settle_s} s")
            continue
        p95 = float(np.percentile(err, 95))
        if p95 >= max_p95_m:
            failures.append(f"{side} wrist tracking p95 {p95 * 1e3:.1f} mm >= {max_p95_m * 1e3:.1f} mm")
    return failures


def check_arm_slew(rec: Recording, max_step_rad: float, tolerance: float = 1e-9) -> list[str]:
    steps = arm_target_steps(rec)
    if len(steps) and steps.max() > max_step_rad + tolerance:
        k = int(steps.argmax())
        return [f"an arm target moved {steps.max():.4f} rad in one tick (t = {rec.command_t[k + 1]:.2f} s), "
                f"limit {max_step_rad} rad"]
    return []


def check_pelvis_above(rec: Recording, min_z_m: float) -> list[str]:
    if len(rec.odom_p) == 0:
        return ["no odometry recorded"]
    z = rec.odom_p[:, 2]
    if z.min() <= min_z_m:
        return [f"pelvis went down to {z.min():.3f} m (t = {rec.odom_t[z.argmin()]:.2f} s), limit {min_z_m} m"]
    return []


# The squat scenario's runs take two 40 N lateral pushes on the pelvis for 0.2 s (the simulator's pushes schedule):
# standing (5 s) and squatting (16 s; the scenario holds the 0.494 m command over 15–18 s).
STANDING_PUSH_S, SQUATTING_PUSH_S = 5.0, 16.0
PUSHES = ("--push", f"{STANDING_PUSH_S},0,40,0,0.2", "--push", f"{SQUATTING_PUSH_S},0,-40,0,0.2")


def check_pushes_taken(rec: Recording) -> list[str]:
    """Both pushes moved the pelvis and neither made the robot fall: standing, the pelvis above 0.7 m and tilted
    less than 0.3 rad for 3 s after; squatting, within 5 cm of 0.5 m and tilted less than 0.8 rad to 18 s."""
    from g1_teleop.tools.run_analysis import pelvis_tilt

    t, y, z = rec.odom_t, rec.odom_p[:, 1], rec.odom_p[:, 2]
    before = (t >= STANDING_PUSH_S - 1.0) & (t < STANDING_PUSH_S)
    after = (t >= STANDING_PUSH_S) & (t < STANDING_PUSH_S + 3.0)
    squatting = (t >= SQUATTING_PUSH_S) & (t < 18.0)
    failures = []
    moved = np.abs(y[after] - y[before].mean()).max()
    if moved <= 0.003:
        failures.append(f"the standing push did not move the pelvis ({moved * 1e3:.1f} mm): was it applied?")
    if z[after].min() <= 0.7 or pelvis_tilt(rec.odom_q[after]).max() >= 0.3:
        failures.append(f"after the standing push: pelvis {z[after].min():.3f} m, tilt "
                        f"{pelvis_tilt(rec.odom_q[after]).max():.2f} rad")
    if np.abs(z[squatting] - 0.5).max() >= 0.05 or pelvis_tilt(rec.odom_q[squatting]).max() >= 0.8:
        failures.append(f"after the squatting push: pelvis {z[squatting].min():.3f}…{z[squatting].max():.3f} m, tilt "
                        f"{pelvis_tilt(rec.odom_q[squatting]).max():.2f} rad")
    return failures
