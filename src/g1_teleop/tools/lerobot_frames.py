"""Frames of a LeRobot dataset from the graph's streams, ROS-free and I/O-free: the fixed-rate grid, sample-and-hold
by stamp, the feature declarations of ``meta/info.json`` and the statistics of ``meta/stats.json``.

Times are the graph's clock in integer ns (message stamps: simulated time in a simulation, the system clock on the
robot). A frame at grid time t holds the latest sample of each stream stamped at or before t: what the policy had
when it ticked at t (a joint_command stamped t answers the joint_states stamped t), never a later sample.
Joint values are in the robot's DDS motor order (config/g1_29dof.yaml): positions rad, velocities rad/s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

NS = 1_000_000_000
QUANTILES = (0.01, 0.10, 0.50, 0.90, 0.99)  # the quantiles LeRobot's statistics carry (q01 … q99)
INDEX_FEATURES = {  # every LeRobot frame's bookkeeping columns
    "timestamp": {"dtype": "float32", "shape": [1], "names": None},
    "frame_index": {"dtype": "int64", "shape": [1], "names": None},
    "episode_index": {"dtype": "int64", "shape": [1], "names": None},
    "index": {"dtype": "int64", "shape": [1], "names": None},
    "task_index": {"dtype": "int64", "shape": [1], "names": None},
}


class FrameError(ValueError):
    """Streams that cannot make frames (too short, no overlap); the message says what is missing."""


@dataclass(frozen=True)
class Stream:
    """One stream's samples, one per stamp, in increasing stamp order: ``stamps_ns`` (n,) int64 and ``values``
    (n, ...) (or any sequence indexed like it, e.g. JPEG bytes)."""

    name: str
    stamps_ns: np.ndarray
    values: np.ndarray | Sequence


def first_per_stamp(name: str, stamps_ns: Sequence[int], values: Sequence) -> Stream:
    """The samples in arrival order → one per stamp (the first publication of a stamp: lockstep graphs publish a
    stamp again while they wait), sorted by stamp."""
    first: dict[int, int] = {}
    for i, stamp in enumerate(stamps_ns):
        first.setdefault(int(stamp), i)
    order = sorted(first)
    picked = [values[first[s]] for s in order]
    array_values = np.asarray(picked) if picked and isinstance(picked[0], np.ndarray) else picked
    return Stream(name, np.asarray(order, dtype=np.int64), array_values)


def frame_grid(streams: Sequence[Stream], fps: int) -> np.ndarray:
    """The frame times (ns, int64) at ``fps`` from the latest first sample of all streams (every frame has a sample
    of each) to the earliest last sample (none is held past its end): t_k = t_0 + round(k·1e9/fps)."""
    if fps <= 0:
        raise FrameError(f"the frame rate must be positive, got {fps}")
    empty = [s.name for s in streams if len(s.stamps_ns) == 0]
    if empty:
        raise FrameError(f"no samples of {', '.join(empty)}")
    start = max(int(s.stamps_ns[0]) for s in streams)
    end = min(int(s.stamps_ns[-1]) for s in streams)
    if end < start:
        raise FrameError("the streams do not overlap in time: " + ", ".join(
            f"{s.name} {s.stamps_ns[0] / NS:.3f}–{s.stamps_ns[-1] / NS:.3f} s" for s in streams))
    count = int((end - start) * fps // NS) + 1
    return start + np.round(np.arange(count) * (NS / fps)).astype(np.int64)


def hold_indices(stream: Stream, grid_ns: np.ndarray) -> np.ndarray:
    """For each frame time, the index of ``stream``'s latest sample stamped at or before it (sample-and-hold)."""
    idx = np.searchsorted(stream.stamps_ns, grid_ns, side="right") - 1
    if len(idx) and idx.min() < 0:
        raise FrameError(f"{stream.name} has no sample at or before {grid_ns[idx < 0][0] / NS:.3f} s")
    return idx


def sample_ages_s(stream: Stream, grid_ns: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """How old (s) each frame's held sample of ``stream`` is."""
    return (grid_ns - stream.stamps_ns[idx]) / NS


def vector_feature(names: Sequence[str], dtype: str = "float32") -> dict:
    """A LeRobot vector feature: one value per name."""
    return {"dtype": dtype, "shape": [len(names)], "names": list(names)}


def video_feature(height: int, width: int, video_info: dict) -> dict:
    """A LeRobot camera feature stored as video (frames height × width × 3 channels, RGB)."""
    return {"dtype": "video", "shape": [height, width, 3], "names": ["height", "width", "channels"],
            "info": dict(video_info)}


POSE_NAMES = ("x", "y", "z", "qw", "qx", "qy", "qz")  # a pose: position (m), orientation (w, x, y, z)


def build_features(joint_names: Sequence[str], velocities: bool, cameras: dict[str, tuple[int, int, dict]],
                   operator: Sequence[str] = ()) -> dict:
    """``meta/info.json``'s features: observation.state (measured positions, rad), observation.velocity (measured
    velocities, rad/s; with ``velocities``), action (joint_command positions, rad), the ``operator`` pose features
    (observation.operator.*: x, y, z m, qw, qx, qy, qz), one observation.images.<name> per camera (name → (height,
    width, video info)) and the bookkeeping columns."""
    features: dict[str, dict] = {"observation.state": vector_feature([f"{n}.pos" for n in joint_names])}
    if velocities:
        features["observation.velocity"] = vector_feature([f"{n}.vel" for n in joint_names])
    features["action"] = vector_feature([f"{n}.pos" for n in joint_names])
    for key in operator:
        features[key] = vector_feature(POSE_NAMES)
    for name, (height, width, info) in cameras.items():
        features[f"observation.images.{name}"] = video_feature(height, width, info)
    features.update({k: dict(v) for k, v in INDEX_FEATURES.items()})
    return features


def vector_stats(values: np.ndarray) -> dict[str, list]:
    """Statistics of a (frames, dims) array per dimension: min, max, mean, std, count and the quantiles."""
    values = np.asarray(values, dtype=np.float64).reshape(len(values), -1)
    stats = {"min": values.min(axis=0), "max": values.max(axis=0), "mean": values.mean(axis=0),
             "std": values.std(axis=0)}
    stats.update({f"q{round(q * 100):02d}": np.quantile(values, q, axis=0) for q in QUANTILES})
    out: dict[str, list] = {k: v.tolist() for k, v in stats.items()}
    out["count"] = [len(values)]
    return out


def image_stats(frames: np.ndarray) -> dict[str, list]:
    """Statistics of RGB frames (n, h, w, 3) uint8 per channel in [0, 1], shaped (3, 1, 1) as LeRobot keeps them;
    ``count`` is the number of frames."""
    pixels = np.asarray(frames, dtype=np.float32).reshape(-1, 3) / 255.0
    stats = vector_stats(pixels)
    out: dict[str, list] = {k: [[[c]] for c in v] for k, v in stats.items() if k != "count"}
    out["count"] = [len(frames)]
    return out
