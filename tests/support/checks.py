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
