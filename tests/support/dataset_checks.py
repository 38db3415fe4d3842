"""A simulation run exported as a LeRobot dataset (`g1-teleop dataset RUN OUT`) and read back by software we did not
write: Hugging Face's ``datasets`` reads the frames, mcap-ros2-support reads the bag's joint_command messages from the
.mcap with its own schemas, and each frame's action must be the command stamped at (or last before) it, each frame's
operator wrists (observation.operator.*) the operator's xr wrist poses held at it. Called by
tests/integration/test_run_report_graph.py on its run (one 3 s simulation serves the report, latency and dataset)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import datasets
import numpy as np

from g1_teleop.tools.cli import main as cli_main
from support.bag_readers import by_mcap_ros2

DURATION_S = 3.0
FPS = 50
NS = 1_000_000_000


def stamp_ns(msg: dict) -> int:
    return msg["header"]["stamp"]["sec"] * NS + msg["header"]["stamp"]["nanosec"]


def first_per_stamp(messages: list[tuple[int, dict]]) -> dict[int, dict]:
    out: dict[int, dict] = {}
    for _, msg in messages:
        out.setdefault(stamp_ns(msg), msg)
    return out


def assert_run_exports_as_a_dataset_of_its_commands_at_50_hz(run, tmp_path: Path, monkeypatch, capsys) -> None:
    """``run``: a ``DURATION_S`` lockstep run of the sim_job fixture."""
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "hf_cache")  # not in ~/.cache
    out = tmp_path / "dataset"
    started = time.monotonic()
    code = cli_main(["dataset", str(run.out), str(out), "--task", "reach forward"])  # in this process: no start-up
    export_s = time.monotonic() - started
    printed = capsys.readouterr()
    assert code == 0, printed.out + printed.err
    summary = json.loads(printed.out[:printed.out.rindex("}") + 1])
    print(f"dataset export {export_s:.2f} s, {summary['size_bytes']} bytes")

    info = json.loads((out / "meta/info.json").read_text())
    assert info["fps"] == FPS and info["codebase_version"] == "v3.0" and info["total_episodes"] == 1
    frames = datasets.Dataset.from_parquet(sorted(str(p) for p in out.glob("data/*/*.parquet")),
                                           cache_dir=str(tmp_path / "hf_cache")).with_format("numpy")
    n = len(frames)
    assert n == info["total_frames"]
    assert abs(n - FPS * DURATION_S) <= 3, n  # the run's 151 commands span 3 s
    state, action = np.asarray(frames["observation.state"]), np.asarray(frames["action"])
    assert state.shape == (n, 29) and action.shape == (n, 29)
    assert np.asarray(frames["observation.velocity"]).shape == (n, 29)
    assert np.allclose(np.asarray(frames["timestamp"]), np.arange(n) / FPS, atol=1e-6)

    bag = by_mcap_ros2(next((run.out / "bag").glob("*.mcap")))
    topic = next(t for t in bag if t.strip("/").endswith("joint_command"))
    commands = first_per_stamp(bag[topic])
    states = first_per_stamp(bag[next(t for t in bag if t.strip("/").endswith("joint_states"))])
    wrists = {side: first_per_stamp(bag[next(t for t in bag if t.strip("/").endswith(f"xr/{side}_wrist"))])
              for side in ("left", "right")}
    t0 = max(min(commands), min(states), *(min(w) for w in wrists.values()))  # the first moment all have a sample
    stamps = np.array(sorted(commands))
    names = info["features"]["action"]["names"]  # joint.pos in the DDS order
    exact = 0
    for k in range(n):
        t = t0 + k * NS // FPS
        held = commands[int(stamps[np.searchsorted(stamps, t, side="right") - 1])]
        exact += stamp_ns(held) == t
        by_name = dict(zip(held["name"], held["position"], strict=True))
        expected = np.array([by_name[name.removesuffix(".pos")] for name in names], dtype=np.float32)
        assert np.allclose(action[k], expected, atol=1e-6), k
    assert exact >= n - 1, f"only {exact} of {n} frames fall on a command's stamp (lockstep: all at 50 Hz)"
    for side, poses in wrists.items():  # what the operator did, frame by frame
        recorded, pose_stamps = np.asarray(frames[f"observation.operator.{side}_wrist"]), np.array(sorted(poses))
        assert info["features"][f"observation.operator.{side}_wrist"]["names"] == ["x", "y", "z", "qw", "qx", "qy",
                                                                                  "qz"]
        for k in range(n):
            pose = poses[int(pose_stamps[np.searchsorted(pose_stamps, t0 + k * NS // FPS, side="right") - 1])]["pose"]
            p, q = pose["position"], pose["orientation"]
            expected = np.array([p["x"], p["y"], p["z"], q["w"], q["x"], q["y"], q["z"]], dtype=np.float32)
            assert np.allclose(recorded[k], expected, atol=1e-6), (side, k)
