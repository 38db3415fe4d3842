"""`g1-teleop bench hands`: Dex3 hand retargeting (25 landmarks → 7 joints) per second per hand, on one core.

Each hand runs the retargeter of hand_retarget (config/dex3.yaml's joints and limits, default settings) on a
seeded sequence of model operator hands (tools.bench.hand_poses: open → fist → open → pinch → open, with 2 mm
of tracking noise), one landmark set after the other as a headset sends them, in one thread: retargets per
second of that thread's CPU time (one core's worth, whatever else runs) and of the wall clock, and the wall
time of each. Also: how close the Dex3's thumb and index fingertip points come in the pinches (forward
kinematics of the targets) and how far apart they are with the hand open, and how far each fingertip point
(thumb, index, middle) is from the operator's fingertip as seen from the wrist, scaled (the retargeter's target;
``tip_err``, every landmark set, the filtered output as sent).

Where the ``dex-retargeting`` package is importable (tools.bench.hands_dex), the same landmark sets also go through
it as Unitree's xr_teleoperate configures it for the Dex3: the same figures prefixed ``dex_``, scored with the
same kinematics and targets, and ``dex_{side}_own_vector_err_*_mm``, its error by its own objective (its vectors
from points near the palm to fingertip links 5 cm along the distal links). Elsewhere one line on stderr says how.
"""

from __future__ import annotations

import time

import numpy as np

from g1_teleop.core.dex3_description import SIDES, load_dex3
from g1_teleop.retarget.hand_retarget import HandRetargeter
from g1_teleop.tools.bench import hands_dex
from g1_teleop.tools.bench.figures import percentiles
from g1_teleop.tools.bench.hand_poses import hand_landmarks

PHASE = 50  # landmark sets per half-phase (open → closed or back)
NOISE_M = 0.002


def hand_sequence(side: str, rng: np.random.Generator) -> tuple[list[np.ndarray], list[str]]:
    """The landmark sets of one cycle and what each shows (open, curl, pinch)."""
    ramp = np.concatenate([np.linspace(0.0, 1.0, PHASE), np.linspace(1.0, 0.0, PHASE)])
    frames = [hand_landmarks(side, curl=c) for c in ramp] + [hand_landmarks(side, pinch=p) for p in ramp]
    kinds = ["open" if c < 0.05 else "curl" for c in ramp] + ["pinch" if p > 0.95 else "open" if p < 0.05 else ""
                                                               for p in ramp]
    return [f + rng.normal(scale=NOISE_M, size=f.shape) for f in frames], kinds


def accuracy(prefix: str, retargeter: HandRetargeter, frames: list[np.ndarray], kinds: list[str],
             outputs: list[np.ndarray]) -> dict[str, float]:
    """Fingertip point errors against the retargeter's targets, and thumb–index gaps in pinches and open hands."""
    errors: list[np.ndarray] = []
    gaps: dict[str, list[float]] = {"pinch": [], "open": []}
    for landmarks, kind, q in zip(frames * (len(outputs) // len(frames)), kinds * (len(outputs) // len(frames)),
                                  outputs, strict=True):
        tips = retargeter.kinematics.tips(q)
        errors.append(np.linalg.norm(tips - retargeter.targets(landmarks)[0], axis=1))
        if kind in gaps:
            gaps[kind].append(float(np.linalg.norm(tips[1] - tips[0])))
    mm = np.concatenate(errors) * 1e3
    return {f"{prefix}_tip_err_p50_mm": round(float(np.percentile(mm, 50)), 1),
            f"{prefix}_tip_err_p95_mm": round(float(np.percentile(mm, 95)), 1),
            f"{prefix}_pinch_thumb_index_max_mm": round(max(gaps["pinch"]) * 1e3, 1),
            f"{prefix}_open_thumb_index_min_mm": round(min(gaps["open"]) * 1e3, 1)}


def rates(prefix: str, cpu_s: float, times: list[float]) -> dict[str, float]:
    return {f"{prefix}_retargets_per_cpu_s": round(len(times) / cpu_s, 1),  # what one core does, busy or not
            f"{prefix}_retargets_per_wall_s": round(len(times) / sum(times), 1),
            **percentiles(f"{prefix}_retarget", times, unit="us", digits=1)}


def bench_hands(cycles: int = 10, seed: int = 0) -> dict[str, float]:
    dex3 = load_dex3()
    rng = np.random.default_rng(seed)
    figures: dict[str, float] = {}
    sequences: dict[str, tuple[list[np.ndarray], list[str]]] = {}
    ours: dict[str, HandRetargeter] = {}
    for side in SIDES:
        retargeter = ours[side] = HandRetargeter(side, dex3)
        frames, kinds = sequences[side] = hand_sequence(side, rng)
        times: list[float] = []
        outputs: list[np.ndarray] = []
        cpu_s = 0.0
        for _ in range(cycles):
            for landmarks in frames:
                start, start_cpu = time.perf_counter(), time.thread_time()
                q = retargeter.update(landmarks)
                cpu_s += time.thread_time() - start_cpu
                times.append(time.perf_counter() - start)
                outputs.append(q)
        figures.update(rates(side, cpu_s, times))
        figures.update(accuracy(side, retargeter, frames, kinds, outputs))
    figures["landmark_sets_per_hand"] = len(times)
    reason = hands_dex.skip_reason()
    if reason:
        hands_dex.say_skipped(reason)
        return figures
    runs = hands_dex.bench_package(dex3, {side: frames for side, (frames, _) in sequences.items()}, cycles)
    for side, (outputs, cpu, wall, own) in runs.items():
        frames, kinds = sequences[side]
        figures.update(rates(f"dex_{side}", sum(cpu), wall))
        figures.update(accuracy(f"dex_{side}", ours[side], frames, kinds, outputs))
        figures[f"dex_{side}_own_vector_err_p50_mm"] = round(float(np.percentile(own, 50)) * 1e3, 1)
        figures[f"dex_{side}_own_vector_err_p95_mm"] = round(float(np.percentile(own, 95)) * 1e3, 1)
    return figures
