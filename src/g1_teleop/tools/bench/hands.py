"""`g1-teleop bench hands`: Dex3 hand retargeting (25 landmarks → 7 joints) per second per hand, on one core.

Each hand runs the retargeter of hand_retarget (config/dex3.yaml's joints and limits, default settings) on a
seeded sequence of model operator hands (tools.bench.hand_poses: open → fist → open → pinch → open, with 2 mm
of tracking noise), one landmark set after the other as a headset sends them, in one thread: retargets per
second of that thread's CPU time (one core's worth, whatever else runs) and of the wall clock, and the wall
time of each. Also: how close the Dex3's thumb and index fingertip points come in the pinches (forward
kinematics of the targets) and how far apart they are with the hand open.
"""

from __future__ import annotations

import time

import numpy as np

from g1_teleop.core.dex3_description import SIDES, load_dex3
from g1_teleop.retarget.hand_retarget import HandRetargeter
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


def bench_hands(cycles: int = 10, seed: int = 0) -> dict[str, float]:
    dex3 = load_dex3()
    rng = np.random.default_rng(seed)
    figures: dict[str, float] = {}
    for side in SIDES:
        retargeter = HandRetargeter(side, dex3)
        frames, kinds = hand_sequence(side, rng)
        times: list[float] = []
        cpu_s = 0.0
        gaps: dict[str, list[float]] = {"pinch": [], "open": []}
        for _ in range(cycles):
            for landmarks, kind in zip(frames, kinds, strict=True):
                start, start_cpu = time.perf_counter(), time.thread_time()
                q = retargeter.update(landmarks)
                cpu_s += time.thread_time() - start_cpu
                times.append(time.perf_counter() - start)
                if kind in gaps:
                    tips = retargeter.kinematics.tips(q)
                    gaps[kind].append(float(np.linalg.norm(tips[1] - tips[0])))
        figures[f"{side}_retargets_per_cpu_s"] = round(len(times) / cpu_s, 1)  # what one core does, busy or not
        figures[f"{side}_retargets_per_wall_s"] = round(len(times) / sum(times), 1)
        figures.update(percentiles(f"{side}_retarget", times, unit="us", digits=1))
        figures[f"{side}_pinch_thumb_index_max_mm"] = round(max(gaps["pinch"]) * 1e3, 1)
        figures[f"{side}_open_thumb_index_min_mm"] = round(min(gaps["open"]) * 1e3, 1)
    figures["landmark_sets_per_hand"] = len(times)
    return figures
