"""LeRobot dataset export (tools/lerobot_frames.py, tools/lerobot_export.py): the frame grid and sample-and-hold by
stamp, the features, and a synthetic bag exported and read back by software we did not write: Hugging Face's
``datasets`` (the data parquet, as LeRobot loads it), pandas (the tasks table) and PyAV (the videos)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import av
import datasets
import numpy as np
import pandas as pd
import pytest
from rosbags.typesys.stores.ros2_kilted import builtin_interfaces__msg__Time as Time
from rosbags.typesys.stores.ros2_kilted import geometry_msgs__msg__Point as Point
from rosbags.typesys.stores.ros2_kilted import geometry_msgs__msg__Pose as Pose
from rosbags.typesys.stores.ros2_kilted import geometry_msgs__msg__PoseStamped as PoseStamped
from rosbags.typesys.stores.ros2_kilted import geometry_msgs__msg__Quaternion as Quaternion
from rosbags.typesys.stores.ros2_kilted import sensor_msgs__msg__CompressedImage as CompressedImage
from rosbags.typesys.stores.ros2_kilted import sensor_msgs__msg__Image as Image
from rosbags.typesys.stores.ros2_kilted import sensor_msgs__msg__JointState as JointState
from rosbags.typesys.stores.ros2_kilted import sensor_msgs__msg__Joy as Joy
from rosbags.typesys.stores.ros2_kilted import std_msgs__msg__Header as Header

from g1_teleop.core.camera_images import encode_jpeg
from g1_teleop.core.robot_description import load_robot
from g1_teleop.core.rosbag import TYPESTORE, BagWriter
from g1_teleop.hardware.wireless_remote import REMOTE_FRAME
from g1_teleop.tools.cli import main as cli_main
from g1_teleop.tools.episode_marks import EpisodeButtons, EpisodeMarks, parse_episode_buttons
from g1_teleop.tools.lerobot_export import DatasetConfig, DatasetError, export_dataset
from g1_teleop.tools.lerobot_frames import (
    FrameError,
    Stream,
    build_features,
    first_per_stamp,
    frame_grid,
    hold_indices,
    image_stats,
    vector_stats,
)

MS = 1_000_000


def stream(name: str, stamps_ms: list[float]) -> Stream:
    stamps = np.asarray(np.round(np.asarray(stamps_ms) * MS), dtype=np.int64)
    return Stream(name, stamps, np.arange(len(stamps)))


def test_the_grid_runs_at_fps_from_the_latest_start_to_the_earliest_end() -> None:
    grid = frame_grid([stream("a", [3, 10, 50, 103]), stream("b", [7, 95])], fps=50)
    assert grid[0] == 7 * MS and grid[-1] <= 95 * MS
    assert np.all(np.diff(grid) == 20 * MS) and len(grid) == 5  # 7, 27, 47, 67, 87
    thirds = frame_grid([stream("a", [0, 1000])], fps=30)
    assert len(thirds) == 31 and thirds[1] == 33_333_333 and thirds[2] == 66_666_667 and thirds[-1] == 10**9


def test_the_grid_refuses_streams_that_cannot_make_frames() -> None:
    with pytest.raises(FrameError, match="no samples of b"):
        frame_grid([stream("a", [0, 10]), stream("b", [])], fps=50)
    with pytest.raises(FrameError, match="do not overlap"):
        frame_grid([stream("a", [0, 10]), stream("b", [20, 30])], fps=50)


def test_a_frame_holds_the_latest_sample_stamped_at_or_before_it() -> None:
    s = stream("s", [0, 20, 25, 40])
    grid = np.array([0, 19, 20, 39, 40, 60], dtype=np.int64) * MS
    assert hold_indices(s, grid).tolist() == [0, 0, 1, 2, 3, 3]
    with pytest.raises(FrameError, match="no sample at or before"):
        hold_indices(stream("late", [5]), np.array([0], dtype=np.int64))


def test_a_stamp_published_again_keeps_its_first_sample_in_stamp_order() -> None:
    s = first_per_stamp("c", [20, 0, 20, 40], [np.array([1.0]), np.array([2.0]), np.array([3.0]), np.array([4.0])])
    assert s.stamps_ns.tolist() == [0, 20, 40] and s.values[:, 0].tolist() == [2.0, 1.0, 4.0]


def test_features_declare_state_velocity_action_cameras_and_bookkeeping() -> None:
    names = ("a_joint", "b_joint")
    features = build_features(names, True, {"left_eye": (480, 640, {"video.codec": "av1"})})
    assert features["observation.state"] == {"dtype": "float32", "shape": [2], "names": ["a_joint.pos", "b_joint.pos"]}
    assert features["observation.velocity"]["names"] == ["a_joint.vel", "b_joint.vel"]
    assert features["action"]["shape"] == [2]
    assert features["observation.images.left_eye"]["dtype"] == "video"
    assert features["observation.images.left_eye"]["shape"] == [480, 640, 3]
    assert {"timestamp", "frame_index", "episode_index", "index", "task_index"} <= set(features)
    assert "observation.velocity" not in build_features(names, False, {})


def test_statistics_per_dimension_and_per_channel() -> None:
    stats = vector_stats(np.array([[0.0, 10.0], [1.0, 10.0], [2.0, 10.0]]))
    assert stats["min"] == [0.0, 10.0] and stats["max"] == [2.0, 10.0] and stats["mean"] == [1.0, 10.0]
    assert stats["count"] == [3] and stats["q50"] == [1.0, 10.0]
    frames = np.zeros((2, 4, 4, 3), dtype=np.uint8)
    frames[..., 0] = 255
    img = image_stats(frames)
    assert img["mean"] == [[[1.0]], [[0.0]], [[0.0]]] and img["count"] == [2]


# --- a synthetic bag: states every 5 ms, commands every 20 ms (each published twice), images every 40 ms ---

def q_at(t_ms: float, n: int, offset: float) -> np.ndarray:
    return offset + 0.001 * t_ms + 0.01 * np.arange(n)


def write_bag(path: Path, duration_ms: int = 1000, images: bool = True, commands: bool = True,
              raw: bool = False, presses: dict[int, tuple[int, ...]] | None = None, wrists: bool = False) -> list[str]:
    """A graph's bag: joint_states at 200 Hz, joint_command at 50 Hz, the left eye at 25 Hz; ``presses`` (ms → the
    Joy buttons held from then, a Joy message every 20 ms) and the operator's wrists and head at 50 Hz (x = t in s;
    the head turned 90° about z, 1.5 m up)."""
    names = list(load_robot().joint_names)
    writer = BagWriter(path)

    def put(topic: str, msg, t_ms: float) -> None:
        ns = int(t_ms * MS)
        writer.write(topic, msg.__msgtype__, ns, TYPESTORE.serialize_cdr(msg, msg.__msgtype__), ns)

    def header(t_ms: float) -> Header:
        ns = int(t_ms * MS)
        return Header(stamp=Time(sec=ns // 10**9, nanosec=ns % 10**9), frame_id="")

    held: tuple[int, ...] = ()
    for t in range(0, duration_ms + 1, 5):
        q = q_at(t, len(names), 0.0)
        if presses is not None and t % 20 == 0:
            held = presses.get(t, held)
            put("/joy", Joy(header=header(t), axes=np.zeros(8, np.float32), buttons=np.array(held, np.int32)), t)
        if wrists and t % 20 == 0:
            for side, y in (("left", 0.2), ("right", -0.2)):
                pose = Pose(position=Point(x=t / 1000, y=y, z=1.0), orientation=Quaternion(x=0.0, y=0.0, z=0.0,
                                                                                           w=1.0))
                put(f"/xr/{side}_wrist", PoseStamped(header=header(t), pose=pose), t)
            head = Pose(position=Point(x=t / 1000, y=0.0, z=1.5), orientation=Quaternion(x=0.0, y=0.0, z=0.5**0.5,
                                                                                      w=0.5**0.5))
            put("/xr/head", PoseStamped(header=header(t), pose=head), t)
        put("/joint_states", JointState(header=header(t), name=names, position=q, velocity=q + 1.0,
                                        effort=np.zeros(29)), t)
        if commands and t % 20 == 0:
            for again in (0.0, 1000.0):  # a lockstep re-publication of the stamp with other values: ignored
                msg = JointState(header=header(t), name=names, position=q_at(t, len(names), 0.5 + again),
                                 velocity=np.zeros(0), effort=np.zeros(0))
                put("/joint_command", msg, t + again / 1000)
        if images and t % 40 == 0:
            rgb = np.full((48, 64, 3), (t // 4) % 256, dtype=np.uint8)
            msg = CompressedImage(header=header(t), format="jpeg", data=np.frombuffer(encode_jpeg(rgb), np.uint8))
            if raw:  # the right eye's uncompressed image instead
                msg = Image(header=header(t), height=48, width=64, encoding="bgr8", is_bigendian=0, step=64 * 3,
                            data=rgb[..., ::-1].reshape(-1).copy())
                put("/camera/right/image_raw", msg, t)
            else:
                put("/camera/left/image_raw/compressed", msg, t)
    writer.close()
    return names


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> tuple[Path, list[str]]:
    root = tmp_path_factory.mktemp("lerobot")
    names = write_bag(root / "bag")
    export_dataset([root / "bag", root / "bag"], root / "ds", DatasetConfig(task="reach"))
    return root / "ds", names


def test_info_declares_the_format_fps_and_counts(exported) -> None:
    ds, names = exported
    info = json.loads((ds / "meta/info.json").read_text())
    assert info["codebase_version"] == "v3.0" and info["fps"] == 50
    assert info["total_episodes"] == 2 and info["total_frames"] == 2 * 51 and info["total_tasks"] == 1
    assert info["features"]["observation.state"]["names"] == [f"{n}.pos" for n in names]
    camera = info["features"]["observation.images.left_eye"]
    assert camera["shape"] == [48, 64, 3] and camera["info"]["video.codec"] == "av1"
    stats = json.loads((ds / "meta/stats.json").read_text())
    assert stats["action"]["count"] == [102] and len(stats["observation.state"]["mean"]) == 29


def test_hugging_face_datasets_reads_the_frames_as_recorded(exported, tmp_path: Path, monkeypatch) -> None:
    ds, _ = exported
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path)  # its cache and locks: not in ~/.cache
    frames = datasets.Dataset.from_parquet(sorted(str(p) for p in ds.glob("data/*/*.parquet")),
                                           cache_dir=str(tmp_path))
    assert len(frames) == 102
    first = frames.filter(lambda row: row["episode_index"] == 0).with_format("numpy")
    t_ms = np.asarray(first["timestamp"], dtype=np.float64) * 1000
    assert np.allclose(t_ms, np.arange(51) * 20, atol=1e-3)  # sim time 0, 20, … 1000 ms
    assert np.asarray(first["frame_index"]).tolist() == list(range(51))
    assert np.asarray(frames["index"]).tolist() == list(range(102))
    action, state = np.asarray(first["action"]), np.asarray(first["observation.state"])
    assert action.shape == (51, 29) and state.shape == (51, 29)
    expected_action = np.stack([q_at(t, 29, 0.5) for t in np.round(t_ms)])  # the first publication of each stamp
    assert np.allclose(action, expected_action, atol=1e-6)
    assert np.allclose(state, np.stack([q_at(t, 29, 0.0) for t in np.round(t_ms)]), atol=1e-6)
    assert np.allclose(np.asarray(first["observation.velocity"]), state + 1.0, atol=1e-6)


def test_pandas_reads_the_tasks_indexed_by_task_and_the_episodes(exported) -> None:
    ds, _ = exported
    tasks = pd.read_parquet(ds / "meta/tasks.parquet")
    assert list(tasks.index) == ["reach"] and tasks.loc["reach", "task_index"] == 0
    episodes = pd.read_parquet(ds / "meta/episodes/chunk-000/file-000.parquet")
    assert episodes["length"].tolist() == [51, 51] and episodes["dataset_to_index"].tolist() == [51, 102]
    assert list(episodes["tasks"][1]) == ["reach"]
    assert episodes["videos/observation.images.left_eye/file_index"].tolist() == [0, 1]


def test_the_export_leaves_this_process_at_its_scheduling(exported) -> None:
    """SVT-AV1 puts the thread that opens an encoder at SCHED_FIFO 99 (as root): the export gives it back (else every
    process started afterwards inherits real-time priority)."""
    assert (os.sched_getscheduler(0), os.sched_getparam(0).sched_priority) == (os.SCHED_OTHER, 0)


def test_pyav_decodes_one_video_frame_per_data_frame(exported) -> None:
    ds, _ = exported
    with av.open(str(ds / "videos/observation.images.left_eye/chunk-000/file-000.mp4")) as container:
        frames = [f.to_ndarray(format="rgb24") for f in container.decode(video=0)]
    assert len(frames) == 51 and frames[0].shape == (48, 64, 3)
    # frame k shows the image stamped at or before k·20 ms: images every 40 ms of gray (t/4) % 256
    grays = np.array([f.mean() for f in frames])
    expected = np.array([((k * 20 // 40 * 40) // 4) % 256 for k in range(51)], dtype=float)
    assert np.abs(grays - expected).max() < 6.0


def test_a_bag_without_commands_or_an_existing_output_is_refused_in_one_line(tmp_path: Path, capsys) -> None:
    write_bag(tmp_path / "bag", duration_ms=100, images=False, commands=False)
    with pytest.raises(DatasetError, match="no joint_command messages"):
        export_dataset([tmp_path / "bag"], tmp_path / "ds", DatasetConfig())
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "x").write_text("")
    assert cli_main(["dataset", str(tmp_path / "bag"), str(tmp_path / "taken")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("g1-teleop dataset: ") and "exists" in err and "Traceback" not in err
    assert cli_main(["dataset", str(tmp_path / "nothing"), str(tmp_path / "ds2")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_record_takes_the_export_options() -> None:
    from g1_teleop.tools.cli import build_parser
    from g1_teleop.tools.lerobot_export import config_from_args

    args = build_parser().parse_args(["record", "--dataset", "ds", "--task", "wave", "--fps", "25", "--no-images"])
    assert args.dataset == "ds"
    assert config_from_args(args) == DatasetConfig(fps=25, task="wave", images=False)
    assert build_parser().parse_args(["record"]).dataset is None
    assert build_parser().parse_args(["record", "--dataset"]).dataset == ""  # datasets/ and the bag's name


def test_raw_images_become_video_and_an_unknown_encoder_is_refused(tmp_path: Path) -> None:
    write_bag(tmp_path / "bag", duration_ms=200, raw=True)
    summary = export_dataset([tmp_path / "bag"], tmp_path / "ds", DatasetConfig())
    assert summary.cameras == ["right_eye"] and summary.frames == 11
    with av.open(str(tmp_path / "ds/videos/observation.images.right_eye/chunk-000/file-000.mp4")) as container:
        grays = [f.to_ndarray(format="rgb24").mean() for f in container.decode(video=0)]
    assert len(grays) == 11 and abs(grays[-1] - 50) < 6  # the image of 200 ms: gray 200 / 4
    with pytest.raises(DatasetError, match="not available"):
        export_dataset([tmp_path / "bag"], tmp_path / "ds2", DatasetConfig(vcodec="no-such-codec"))
    assert not (tmp_path / "ds2").exists() and not (tmp_path / "ds2.partial").exists()  # nothing half-written
    no_images = export_dataset([tmp_path / "bag"], tmp_path / "ds3", DatasetConfig(images=False))
    assert no_images.cameras == [] and not (tmp_path / "ds3/videos").exists()
    again = export_dataset([tmp_path / "bag"], tmp_path / "ds3", DatasetConfig(fps=25), overwrite=True)
    assert again.frames == 6 and json.loads((tmp_path / "ds3/meta/info.json").read_text())["fps"] == 25


LEROBOT_READER = """
import json, sys
import numpy as np
from lerobot.datasets.lerobot_dataset import LeRobotDataset
root, backend = sys.argv[1], sys.argv[2]
ds = LeRobotDataset("local/g1_teleop", root=root, video_backend=backend,
                    delta_timestamps={"action": [0.0, 0.02], "observation.images.left_eye": [-0.02, 0.0]})
items = [ds[i] for i in range(len(ds))]
print(json.dumps({"frames": ds.num_frames, "episodes": ds.num_episodes, "fps": ds.fps,
                  "tasks": sorted({it["task"] for it in items}),
                  "action": np.stack([it["action"][0].numpy() for it in items]).tolist(),
                  "pad": [bool(it["action_is_pad"][1]) for it in items],
                  "image": list(items[0]["observation.images.left_eye"].shape)}))
"""


def test_lerobot_reads_the_dataset(exported) -> None:
    """LeRobot's own LeRobotDataset (video decoding, delta_timestamps) in an interpreter that has it: current LeRobot
    needs Python ≥ 3.12 and PyTorch, so it is not a dependency; G1_TELEOP_LEROBOT_PYTHON names that interpreter
    (e.g. a venv with `pip install lerobot torchcodec`), G1_TELEOP_LEROBOT_VIDEO_BACKEND its decoder (torchcodec)."""
    python = os.environ.get("G1_TELEOP_LEROBOT_PYTHON")
    if not python:
        pytest.skip("no interpreter with LeRobot (set G1_TELEOP_LEROBOT_PYTHON)")
    ds, _ = exported
    backend = os.environ.get("G1_TELEOP_LEROBOT_VIDEO_BACKEND", "torchcodec")
    proc = subprocess.run([python, "-c", LEROBOT_READER, str(ds), backend], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "HF_HUB_OFFLINE": "1", "SVT_LOG": "1"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["frames"] == 102 and got["episodes"] == 2 and got["fps"] == 50 and got["tasks"] == ["reach"]
    expected = np.stack([q_at(t, 29, 0.5) for t in range(0, 1001, 20)])
    assert np.allclose(np.asarray(got["action"]), np.concatenate([expected, expected]), atol=1e-6)
    assert got["pad"] == ([False] * 50 + [True]) * 2  # the next action is padding at each episode's last frame
    assert got["image"] == [2, 3, 48, 64]


def test_episodes_marked_with_the_buttons_and_the_operators_wrists(tmp_path: Path) -> None:
    """X (button 2) starts and ends an episode, Y (3) discards the open one; one still open ends with the bag."""
    x, y, none = (0, 0, 1, 0), (0, 0, 0, 1), (0, 0, 0, 0)
    presses = {100: x, 120: none, 400: x, 420: none, 500: x, 520: none, 600: y, 620: none, 700: x, 720: x,
               740: none, 800: x, 820: none, 900: x, 920: none}  # (720: X still held, no second press)
    write_bag(tmp_path / "bag", images=False, presses=presses, wrists=True)
    summary = export_dataset([tmp_path / "bag"], tmp_path / "ds", DatasetConfig())
    frames = pd.read_parquet(tmp_path / "ds/data/chunk-000/file-000.parquet")
    assert summary.episodes == 3 and summary.frames == 15 + 5 + 6  # [100, 400), [700, 800), [900, end]
    files = sorted((tmp_path / "ds/data/chunk-000").glob("*.parquet"))
    stamps = [np.round(pd.read_parquet(f)["observation.operator.left_wrist"].map(lambda v: v[0]).to_numpy() * 1000)
              for f in files]  # the wrists' x is the time (s): the frames kept
    assert [s.tolist() for s in stamps] == [list(range(100, 400, 20)), list(range(700, 800, 20)),
                                            list(range(900, 1001, 20))]
    np.testing.assert_allclose(np.stack(frames["observation.operator.right_wrist"])[0], [0.1, -0.2, 1.0, 1, 0, 0, 0])
    np.testing.assert_allclose(np.stack(frames["observation.operator.head"])[[0, -1]],
                               [[0.1, 0, 1.5, 0.5**0.5, 0, 0, 0.5**0.5], [0.38, 0, 1.5, 0.5**0.5, 0, 0, 0.5**0.5]],
                               atol=1e-6)  # (float32)
    np.testing.assert_allclose(np.stack(frames["action"]), np.stack([q_at(t, 29, 0.5) for t in range(100, 400, 20)]),
                               atol=1e-6)
    info = json.loads((tmp_path / "ds/meta/info.json").read_text())
    for pose in ("left_wrist", "right_wrist", "head"):
        feature = info["features"][f"observation.operator.{pose}"]
        assert feature == {"dtype": "float32", "shape": [7], "names": ["x", "y", "z", "qw", "qx", "qy", "qz"]}
    assert info["total_episodes"] == 3
    whole = export_dataset([tmp_path / "bag"], tmp_path / "whole", DatasetConfig(episode_buttons=None,
                                                                                     operator=False))
    assert whole.episodes == 1 and whole.frames == 51
    assert not [k for k in json.loads((tmp_path / "whole/meta/info.json").read_text())["features"]
                if k.startswith("observation.operator.")]


def test_episode_marks_count_rising_edges_and_discard_the_last_one() -> None:
    marks = EpisodeMarks(EpisodeButtons())
    assert marks.windows(10) is None  # nothing started: the whole recording
    events = [marks.press(t, buttons) for t, buttons in
              ((1, (0, 0, 1)), (2, (0, 0, 1)), (3, ()), (4, (0, 0, 1)), (5, (0, 0, 0, 1)), (6, (0, 0, 1)))]
    assert events == ["episode 1 started", None, None, "episode 1 ended (0.0 s)", "episode 1 discarded",
                      "episode 1 started"]
    assert marks.windows(10) == [(6, 10)]
    with pytest.raises(ValueError, match="TOGGLE,DISCARD"):
        parse_episode_buttons("2")
    with pytest.raises(ValueError, match="two different indices"):
        parse_episode_buttons("3,3")


def test_episode_marks_take_edges_per_joy_source_and_never_the_robots_remote() -> None:
    """On a robot, joy carries the operator's device and the G1's wireless remote (hw_bridge) interleaved: the
    remote's buttons 2 and 3 (start, select) mark nothing, and its messages do not cut a held X into presses."""
    marks = EpisodeMarks(EpisodeButtons())
    held_x, remote_idle, remote_start_select = (0, 0, 1), (0,) * 16, (0, 0, 1, 1) + (0,) * 12
    events = [marks.press(t, buttons, source) for t, (buttons, source) in enumerate(
        [(held_x, "xr_controllers"), (remote_idle, REMOTE_FRAME)] * 5 + [(remote_start_select, REMOTE_FRAME)] * 3)]
    assert events == ["episode 1 started"] + [None] * 12
    assert marks.press(20, (0, 0, 0), "xr_controllers") is None
    assert marks.press(21, held_x, "xr_controllers") == "episode 1 ended (0.0 s)"
