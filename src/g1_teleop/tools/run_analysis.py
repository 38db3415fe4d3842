"""Figures and plots of a run: wrist tracking, pelvis height, commands. ROS-free.

The wrist reached by the robot is computed by forward kinematics of the measured joints (pelvis frame);
the target is the latest operator sample at or before each state sample.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from g1_teleop.core.robot_description import ARM_INDICES
from g1_teleop.core.rotations import tilt
from g1_teleop.tools.run_recording import Recording

Fk = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]  # q (29,) → pelvis_T_left_ee, pelvis_T_right_ee


def reached_wrists(rec: Recording, fk: Fk) -> tuple[np.ndarray, np.ndarray]:
    """left_ee and right_ee positions (N, 3), pelvis frame, at each state sample."""
    left, right = np.zeros((len(rec.state_t), 3)), np.zeros((len(rec.state_t), 3))
    for i, q in enumerate(rec.state_q):
        pelvis_T_left, pelvis_T_right = fk(q)
        left[i], right[i] = pelvis_T_left[:3, 3], pelvis_T_right[:3, 3]
    return left, right


def targets_at(rec: Recording, t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Wrist targets in force at times ``t``: the latest sample at or before each; mask of valid rows."""
    idx = np.searchsorted(rec.wrist_t, t, side="right") - 1
    valid = idx >= 0
    idx = np.clip(idx, 0, max(len(rec.wrist_t) - 1, 0))
    if len(rec.wrist_t) == 0:
        return np.zeros((len(t), 3)), np.zeros((len(t), 3)), np.zeros(len(t), bool)
    return rec.wrist_left[idx], rec.wrist_right[idx], valid


def wrist_errors(rec: Recording, fk: Fk, settle_s: float = 1.0, lag_s: float = 0.0) -> dict[str, np.ndarray]:
    """Per-sample position error (m) of each wrist after ``settle_s`` seconds, against the target in force
    ``lag_s`` seconds before each state sample (0: at it)."""
    return _wrist_errors(rec, reached_wrists(rec, fk), settle_s, lag_s)[0]


def tracking_lag(rec: Recording, fk: Fk, settle_s: float = 1.0, max_lag_s: float = 0.5,
                 step_s: float = 0.01) -> tuple[float, dict[str, np.ndarray]]:
    """How late the wrists follow their targets: the lag (s, a multiple of ``step_s`` up to ``max_lag_s``) whose
    :func:`wrist_errors` have the smallest p95 over both wrists, and those errors (m). End-to-end latency and
    the arms' own dynamics both count in it."""
    reached = reached_wrists(rec, fk)
    best: tuple[float, float, dict[str, np.ndarray]] | None = None
    for lag_s in np.arange(0.0, max_lag_s + step_s / 2, step_s):
        errors = _wrist_errors(rec, reached, settle_s, float(lag_s))[0]
        both = np.concatenate(list(errors.values()))
        p95 = float(np.percentile(both, 95)) if len(both) else np.inf
        if best is None or p95 < best[0]:
            best = (p95, float(lag_s), errors)
    assert best is not None
    return best[1], best[2]


def _wrist_errors(rec: Recording, reached: tuple[np.ndarray, np.ndarray], settle_s: float,
                  lag_s: float) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """The errors (m) of the reached wrists against the targets ``lag_s`` earlier, and the state samples kept."""
    target_left, target_right, valid = targets_at(rec, rec.state_t - lag_s)
    keep = valid & (rec.state_t >= settle_s)
    return {
        "left": np.linalg.norm(reached[0] - target_left, axis=1)[keep],
        "right": np.linalg.norm(reached[1] - target_right, axis=1)[keep],
    }, keep


def wrist_error_series(rec: Recording, fk: Fk, settle_s: float = 1.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The samples of :func:`wrist_errors` with their times: (t, left error, right error), m."""
    errors, kept = _wrist_errors(rec, reached_wrists(rec, fk), settle_s, 0.0)
    return rec.state_t[kept], errors["left"], errors["right"]


def arm_target_steps(rec: Recording) -> np.ndarray:
    """Largest change of any arm target per control tick (rad), one value per consecutive command pair: a pair
    k ticks apart (the commands' median interval; ticks a starved policy skipped or a busy recorder missed)
    counts its change / k."""
    arm = rec.command_q[:, ARM_INDICES]
    if len(arm) < 2:
        return np.zeros(0)
    intervals = np.diff(rec.command_t)
    ticks = np.maximum(1.0, np.round(intervals / np.median(intervals)))
    return np.abs(np.diff(arm, axis=0)).max(axis=1) / ticks


def _stats(prefix: str, values: np.ndarray) -> dict[str, float | None]:
    if len(values) == 0:
        return {f"{prefix}_p50_m": None, f"{prefix}_p95_m": None, f"{prefix}_max_m": None}
    return {
        f"{prefix}_p50_m": float(np.percentile(values, 50)),
        f"{prefix}_p95_m": float(np.percentile(values, 95)),
        f"{prefix}_max_m": float(values.max()),
    }


FALL_HEIGHT_M = 0.3  # below the deepest squat (pelvis ≈ 0.35 m at a 0.35 m command)
FALL_TILT_RAD = 1.0  # ≈ 57°: beyond any commanded lean (squat pitch ≤ 0.5 rad)


def pelvis_tilt(world_q_pelvis: np.ndarray) -> np.ndarray:
    """Angle (rad) between the pelvis z axis and the world z axis, for (N, 4) quaternions (w, x, y, z)."""
    return np.asarray(tilt(np.atleast_2d(world_q_pelvis)))


def fell(rec: Recording) -> bool:
    """The pelvis went below FALL_HEIGHT_M or tilted beyond FALL_TILT_RAD."""
    if len(rec.odom_p) == 0:
        return False
    too_low = rec.odom_p[:, 2].min() < FALL_HEIGHT_M
    return bool(too_low or (len(rec.odom_q) and pelvis_tilt(rec.odom_q).max() > FALL_TILT_RAD))


def summarize(rec: Recording, fk: Fk, settle_s: float = 1.0) -> dict[str, object]:
    """Figures of a run (without the run's wall-clock facts, which the caller adds)."""
    errors = wrist_errors(rec, fk, settle_s)
    pelvis_z = rec.odom_p[:, 2] if len(rec.odom_p) else np.zeros(0)
    steps = arm_target_steps(rec)
    latency = rec.trace_t - rec.trace_origin_t if len(rec.trace_t) else np.zeros(0)
    summary: dict[str, object] = {
        "sim_time_s": float(rec.state_t[-1]) if len(rec.state_t) else 0.0,
        "commands_published": len(rec.command_t),
        "pelvis_min_z_m": float(pelvis_z.min()) if len(pelvis_z) else None,
        "pelvis_max_tilt_rad": float(pelvis_tilt(rec.odom_q).max()) if len(rec.odom_q) else None,
        "fell": fell(rec),
        **_stats("left_wrist_err", errors["left"]),
        **_stats("right_wrist_err", errors["right"]),
        "arm_target_step_max_rad": float(steps.max()) if len(steps) else None,
        "operator_to_command_p50_s": float(np.percentile(latency, 50)) if len(latency) else None,
    }
    return summary


def plot(rec: Recording, fk: Fk, joint_names: tuple[str, ...], out_dir: Path) -> list[Path]:
    """PNG plots: wrist target vs reached (per axis), arm joint targets vs measured."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    left, right = reached_wrists(rec, fk)
    target_left, target_right, valid = targets_at(rec, rec.state_t)
    fig, axes = plt.subplots(3, 2, figsize=(12, 8), sharex=True)
    for col, (side, reached, target) in enumerate((("left", left, target_left), ("right", right, target_right))):
        for row, axis in enumerate("xyz"):
            ax = axes[row, col]
            ax.plot(rec.state_t[valid], target[valid, row], "k--", lw=1.2, label="target")
            ax.plot(rec.state_t, reached[:, row], "C0", lw=1.0, label="reached")
            ax.set_ylabel(f"{side} {axis} [m]")
            ax.grid(alpha=0.3)
        axes[0, col].set_title(f"{side} wrist (left_ee/right_ee), pelvis frame")
        axes[2, col].set_xlabel("time [s]")
    axes[0, 0].legend(loc="best")
    fig.tight_layout()
    paths.append(out_dir / "wrist_tracking.png")
    fig.savefig(paths[-1], dpi=90)
    plt.close(fig)

    if len(rec.odom_t):
        fig, (ax_z, ax_xy) = plt.subplots(1, 2, figsize=(12, 4))
        ax_z.plot(rec.odom_t, rec.odom_p[:, 2], "C2")
        ax_z.axhline(FALL_HEIGHT_M, color="r", ls=":", label="fall height")
        ax_z.set_xlabel("time [s]")
        ax_z.set_ylabel("pelvis z [m]")
        ax_z.legend(loc="best")
        ax_xy.plot(rec.odom_p[:, 0], rec.odom_p[:, 1], "C2")
        ax_xy.set_xlabel("world x [m]")
        ax_xy.set_ylabel("world y [m]")
        ax_xy.set_aspect("equal", adjustable="datalim")
        for ax in (ax_z, ax_xy):
            ax.grid(alpha=0.3)
        fig.suptitle("pelvis: height and path on the floor")
        fig.tight_layout()
        paths.append(out_dir / "pelvis.png")
        fig.savefig(paths[-1], dpi=90)
        plt.close(fig)

    arm = list(ARM_INDICES)
    fig, axes = plt.subplots(7, 2, figsize=(12, 12), sharex=True)
    for k, j in enumerate(arm):
        ax = axes[k % 7, k // 7]
        ax.plot(rec.command_t, rec.command_q[:, j], "k--", lw=1.0, label="target")
        ax.plot(rec.state_t, rec.state_q[:, j], "C1", lw=1.0, label="measured")
        ax.set_ylabel(joint_names[j].removesuffix("_joint"), fontsize=7)
        ax.grid(alpha=0.3)
    axes[0, 0].legend(loc="best", fontsize=7)
    axes[-1, 0].set_xlabel("time [s]")
    axes[-1, 1].set_xlabel("time [s]")
    fig.suptitle("arm joint targets vs measured [rad]")
    fig.tight_layout()
    paths.append(out_dir / "arm_joints.png")
    fig.savefig(paths[-1], dpi=90)
    plt.close(fig)
    return paths
