"""Bags of the graph → a LeRobot dataset (Hugging Face's on-disk format, codebase version v3.0): each bag one
episode, or the episodes the operator marked in it with the joy buttons (tools/episode_marks.py: X starts and ends
one, Y discards).

Each frame, on a fixed grid of ``fps`` frames per second of the graph's clock (message stamps; 50 Hz is the
command rate), holds the latest joint_states and joint_command stamped at or before it (tools/lerobot_frames.py):
``observation.state`` the 29 measured joint positions (rad, DDS motor order), ``observation.velocity`` their
velocities (rad/s), ``action`` the 29 joint_command positions (rad); for each of the operator's poses the bag has
(xr/left_wrist, xr/right_wrist: the wrist targets in the pelvis frame; xr/head: the headset in its world, robot
basis), ``observation.operator.left_wrist``/``right_wrist``/``head``: x, y, z (m) and the orientation w, x, y, z in
xr_input's frame, what the operator did; and, when the bag has the eyes' images (``eyes:=true``),
``observation.images.left_eye``/``right_eye`` as AV1 video (PyAV's libsvtav1, yuv420p, as LeRobot records). The folder::

    meta/info.json  meta/stats.json  meta/tasks.parquet  meta/episodes/chunk-000/file-000.parquet
    data/chunk-000/file-NNN.parquet  videos/observation.images.<camera>/chunk-000/file-NNN.mp4

holds one data file and one video file per camera for each episode NNN. Parquet is written with pyarrow; LeRobot's
``LeRobotDataset(repo_id, root=OUT)`` and the ``datasets`` library read it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from g1_teleop.core.realtime_priority import scheduling_kept
from g1_teleop.tools.episode_marks import EpisodeButtons, EpisodeMarks, parse_episode_buttons
from g1_teleop.tools.lerobot_frames import (
    FrameError,
    Stream,
    build_features,
    first_per_stamp,
    frame_grid,
    hold_indices,
    image_stats,
    sample_ages_s,
    vector_stats,
)

CODEBASE_VERSION = "v3.0"
CHUNKS_SIZE = 1000  # files per chunk folder
DATA_PATH = "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet"
VIDEO_PATH = "videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4"
EPISODES_PATH = "meta/episodes/chunk-000/file-000.parquet"
CAMERA_TOPICS = {  # camera name → (compressed topic, raw topic): the eyes node's (nodes/eyes.py)
    "left_eye": ("camera/left/image_raw/compressed", "camera/left/image_raw"),
    "right_eye": ("camera/right/image_raw/compressed", "camera/right/image_raw"),
}
DEFAULT_TASK = "teleoperate the Unitree G1"
OPERATOR_POSES = {"observation.operator.left_wrist": "xr/left_wrist",
                  "observation.operator.right_wrist": "xr/right_wrist", "observation.operator.head": "xr/head"}


class DatasetError(ValueError):
    """A bag or output that cannot become a dataset; the message says which and what to do."""


@dataclass(frozen=True)
class DatasetConfig:
    """How bags become a dataset."""

    fps: int = 50  # frames per second of the graph's clock (the policy's command rate)
    task: str = DEFAULT_TASK  # the episodes' task (LeRobot's language instruction)
    velocities: bool = True  # observation.velocity: the measured joint velocities (rad/s)
    images: bool = True  # observation.images.* from the eyes' topics when the bag has them
    vcodec: str = "libsvtav1"  # PyAV's encoder (LeRobot's default: AV1 by SVT-AV1)
    crf: int = 30  # encoder quality (lower: better, larger)
    gop: int = 2  # keyframe interval (frames): LeRobot's, for fast random access
    preset: int = 12  # SVT-AV1 speed preset (LeRobot's default)
    robot_type: str = "unitree_g1_29dof"
    joint_names: tuple[str, ...] = field(default_factory=tuple)  # default: config/g1_29dof.yaml's order
    operator: bool = True  # observation.operator.* from the operator's poses the bag has
    episode_buttons: EpisodeButtons | None = field(default_factory=EpisodeButtons)  # None: one episode per bag


@dataclass
class Episode:
    """One bag's frames: ``grid_ns`` the frame times (graph clock), arrays per feature, the cameras' frames."""

    source: Path
    grid_ns: np.ndarray
    vectors: dict[str, np.ndarray]  # feature → (frames, dims) float32
    cameras: dict[str, tuple[Stream, np.ndarray]]  # camera → (its image messages, the held index per frame)
    max_age_s: dict[str, float]  # stream → the oldest held sample's age (s)

    def __len__(self) -> int:
        return len(self.grid_ns)

    def between(self, start_ns: int, end_ns: int) -> Episode:
        """The frames at start_ns <= t < end_ns (graph clock)."""
        keep = (self.grid_ns >= start_ns) & (self.grid_ns < end_ns)
        return Episode(self.source, self.grid_ns[keep], {k: v[keep] for k, v in self.vectors.items()},
                       {c: (images, held[keep]) for c, (images, held) in self.cameras.items()}, self.max_age_s)


def resolve_bag(path: Path) -> Path:
    """A run directory (g1-teleop sim) → its bag/; a bag folder or .mcap as is."""
    return path / "bag" if (path / "bag").is_dir() else path


def episodes_from_bag(path: Path, cfg: DatasetConfig, joint_names: tuple[str, ...]) -> list[Episode]:
    """Read a bag, resample it on the frame grid, and cut it into the episodes the operator marked (the whole bag
    when none was started; an episode without frames is left out)."""
    from g1_teleop.core.joint_vector import JointIndex, MalformedJointMessage
    from g1_teleop.core.rosbag import BagError, read_bag
    from g1_teleop.tools.bag_analysis import stamp_of

    bag_path = resolve_bag(path)
    compressed_topics = [compressed for compressed, _ in CAMERA_TOPICS.values()] if cfg.images else []
    try:
        bag = read_bag(bag_path, ["joint_states", "joint_command", "joy", *OPERATOR_POSES.values(),
                                  *compressed_topics])
        raw_topics = [raw for compressed, raw in CAMERA_TOPICS.values()
                      if cfg.images and not bag.get(compressed) and any(t.endswith(raw) for t in bag.topics)]
        if raw_topics:  # raw images (≈ 1 MB each) only for a camera recorded without its JPEGs
            bag.messages.update(read_bag(bag_path, raw_topics).messages)
    except BagError as exc:
        raise DatasetError(str(exc)) from None
    joints = JointIndex(joint_names)
    streams: dict[str, Stream] = {}
    for topic in ("joint_states", "joint_command"):
        stamps, rows = [], []
        for m in bag.get(topic):
            try:
                vec = joints.parse(m.msg.name, m.msg.position, m.msg.velocity, need_velocity=topic == "joint_states")
            except MalformedJointMessage:
                continue
            velocity = vec.velocity if vec.velocity is not None else np.zeros(len(joint_names))
            stamps.append(stamp_of(m.msg))
            rows.append(np.concatenate([vec.position, velocity]).astype(np.float32))
        if not rows:
            raise DatasetError(f"{bag_path}: no {topic} messages of the {len(joint_names)} joints: a bag of the "
                               "graph has them (`g1-teleop record` or a run's bag/)")
        streams[topic] = first_per_stamp(topic, stamps, rows)
    for topic in OPERATOR_POSES.values() if cfg.operator else ():
        if bag.get(topic):
            poses = [(stamp_of(m.msg), m.msg.pose) for m in bag.get(topic)]
            streams[topic] = first_per_stamp(topic, [s for s, _ in poses], [np.array(
                [p.position.x, p.position.y, p.position.z, p.orientation.w, p.orientation.x, p.orientation.y,
                 p.orientation.z], dtype=np.float32) for _, p in poses])
    images: dict[str, Stream] = {}
    for camera, (compressed, raw) in CAMERA_TOPICS.items():
        for topic in (compressed, raw) if cfg.images else ():
            messages = bag.get(topic)
            if messages:
                images[camera] = first_per_stamp(camera, [stamp_of(m.msg) for m in messages],
                                                 [m.msg for m in messages])
                break
    try:
        grid = frame_grid([*streams.values(), *images.values()], cfg.fps)
        held = {name: hold_indices(s, grid) for name, s in {**streams, **images}.items()}
    except FrameError as exc:
        raise DatasetError(f"{bag_path}: {exc}") from None
    n = len(joint_names)
    state = np.asarray(streams["joint_states"].values)[held["joint_states"]]
    vectors = {"observation.state": state[:, :n]}
    if cfg.velocities:
        vectors["observation.velocity"] = state[:, n:]
    vectors["action"] = np.asarray(streams["joint_command"].values)[held["joint_command"]][:, :n]
    for feature, topic in OPERATOR_POSES.items():
        if topic in streams:
            vectors[feature] = np.asarray(streams[topic].values)[held[topic]]
    ages = {name: float(sample_ages_s(s, grid, held[name]).max()) for name, s in {**streams, **images}.items()}
    whole = Episode(path, grid, vectors, {c: (s, held[c]) for c, s in images.items()}, ages)
    windows = _marked_windows(bag.get("joy"), cfg.episode_buttons, int(grid[-1]) + 1)
    if windows is None:
        return [whole]
    return [part for start, end in windows if len(part := whole.between(start, end))]


def _marked_windows(joy_messages, buttons: EpisodeButtons | None, end_ns: int) -> list[tuple[int, int]] | None:
    """The episodes the operator's buttons marked in the bag's joy (None: none started, or marks not used)."""
    from g1_teleop.tools.bag_analysis import stamp_of

    if buttons is None:
        return None
    marks = EpisodeMarks(buttons)
    for m in sorted(joy_messages, key=lambda m: stamp_of(m.msg)):
        marks.press(stamp_of(m.msg), m.msg.buttons, m.msg.header.frame_id)
    return marks.windows(end_ns)


def _image_rgb(msg) -> np.ndarray:
    """An image message (sensor_msgs CompressedImage JPEG, or Image rgb8/bgr8) → RGB (h, w, 3) uint8."""
    from g1_teleop.core.camera_images import decode_jpeg

    if hasattr(msg, "format"):
        return decode_jpeg(bytes(msg.data))
    if msg.encoding not in ("rgb8", "bgr8"):
        raise DatasetError(f"an image of encoding {msg.encoding!r}: the export reads rgb8, bgr8 and JPEG")
    rgb = np.asarray(msg.data, dtype=np.uint8).reshape(msg.height, msg.step)[:, :msg.width * 3]
    rgb = rgb.reshape(msg.height, msg.width, 3)
    return rgb[..., ::-1] if msg.encoding == "bgr8" else rgb


def encode_video(path: Path, images: Stream, held: np.ndarray, cfg: DatasetConfig) -> tuple[dict, np.ndarray]:
    """Encode the held images, one per frame, as ``path`` (MP4); → (the feature's video info, a sample of frames
    for the statistics). Each recorded image is decoded once (``held`` never decreases)."""
    try:
        import av
    except ImportError:
        raise DatasetError("the bag has camera images and encoding them needs PyAV (pip install av), or export "
                           "without them (--no-images)") from None
    os.environ.setdefault("SVT_LOG", "1")  # SVT-AV1 prints its configuration at every stream; errors only
    last: tuple[int, np.ndarray] | None = None  # the held indices never decrease: one decoded image at a time
    height = width = 0
    sample_every = max(1, len(held) // 50)
    samples = []
    path.parent.mkdir(parents=True, exist_ok=True)
    options = {"g": str(cfg.gop)}
    if cfg.vcodec in ("libsvtav1", "libx264", "libx265"):
        options.update(crf=str(cfg.crf), preset=str(cfg.preset) if cfg.vcodec == "libsvtav1" else "medium")
    with scheduling_kept(), av.open(str(path), "w") as container:
        try:
            stream = container.add_stream(cfg.vcodec, rate=cfg.fps, options=options)
        except (ValueError, av.FFmpegError) as exc:
            raise DatasetError(f"the video encoder {cfg.vcodec!r} is not available in PyAV ({exc})") from None
        for k, i in enumerate(held):
            if last is None or last[0] != int(i):
                try:
                    last = (int(i), _image_rgb(images.values[int(i)]))
                except ValueError as exc:
                    raise DatasetError(f"{images.name}: an image is not readable ({exc})") from None
            rgb = last[1]
            if k == 0:
                if rgb.shape[0] % 2 or rgb.shape[1] % 2:
                    raise DatasetError(f"{images.name}: images of {rgb.shape[1]}×{rgb.shape[0]} pixels; yuv420p "
                                       "video needs an even width and height")
                stream.width, stream.height, stream.pix_fmt = rgb.shape[1], rgb.shape[0], "yuv420p"
                height, width = rgb.shape[:2]
            if rgb.shape[:2] != (height, width):
                raise DatasetError(f"{images.name}: the image size changes during the recording")
            if k % sample_every == 0:
                samples.append(rgb[::4, ::4])
            for packet in stream.encode(av.VideoFrame.from_ndarray(np.ascontiguousarray(rgb), format="rgb24")):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    with av.open(str(path)) as container:
        vs = container.streams.video[0]
        info = {"video.height": vs.height, "video.width": vs.width, "video.codec": vs.codec.canonical_name,
                "video.pix_fmt": vs.pix_fmt, "video.is_depth_map": False, "video.fps": cfg.fps,
                "video.channels": 3, "video.g": cfg.gop, "video.crf": cfg.crf, "has_audio": False}
    return info, np.stack(samples)


def _pandas_index_metadata(index: str, columns: list[tuple[str, str, str]]) -> bytes:
    """pandas' parquet metadata that makes column ``index`` the DataFrame's index (LeRobot's tasks table is indexed
    by the task string); ``columns`` = (name, pandas type, numpy type)."""
    return json.dumps({
        "index_columns": [index],
        "column_indexes": [{"name": None, "field_name": None, "pandas_type": "unicode", "numpy_type": "object",
                            "metadata": {"encoding": "UTF-8"}}],
        "columns": [{"name": name, "field_name": name, "pandas_type": pandas_type, "numpy_type": numpy_type,
                     "metadata": None} for name, pandas_type, numpy_type in columns],
        "creator": {"library": "pyarrow", "version": __import__("pyarrow").__version__},
        "pandas_version": "2.2.3",
    }).encode()


@dataclass
class ExportSummary:
    """What was written."""

    out: Path
    episodes: int
    frames: int
    fps: int
    cameras: list[str]
    seconds: float  # wall time of the export
    bytes: int  # the dataset's size on disk
    max_age_s: dict[str, float]  # per stream, the oldest sample a frame held (all episodes)

    def as_dict(self) -> dict:
        return {"out": str(self.out), "episodes": self.episodes, "frames": self.frames, "fps": self.fps,
                "cameras": self.cameras, "export_s": round(self.seconds, 2), "size_bytes": self.bytes,
                "held_sample_max_age_s": {k: round(v, 4) for k, v in self.max_age_s.items()}}


def _write_episode(root: Path, e: int, first_index: int, ep: Episode, cfg: DatasetConfig,
                   cameras: dict[str, tuple[int, int, dict]],
                   image_samples: dict[str, list[np.ndarray]]) -> tuple[dict, dict[str, np.ndarray]]:
    """Write episode ``e`` (its data parquet, one video per camera) under ``root``; → its row of the episodes table
    and its data columns (the cameras' video info goes into ``cameras``, their sampled frames into
    ``image_samples``)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    n = len(ep.grid_ns)
    columns = _columns(ep, e, first_index, cfg.fps)
    chunk, file = divmod(e, CHUNKS_SIZE)
    row: dict = {"episode_index": e, "tasks": [cfg.task], "length": n, "data/chunk_index": chunk,
                 "data/file_index": file, "dataset_from_index": first_index, "dataset_to_index": first_index + n}
    for camera, (images, held) in sorted(ep.cameras.items()):
        key = f"observation.images.{camera}"
        info, samples = encode_video(root / VIDEO_PATH.format(video_key=key, chunk_index=chunk, file_index=file),
                                     images, held, cfg)
        cameras[camera] = (info["video.height"], info["video.width"], info)
        image_samples.setdefault(camera, []).append(samples)
        row.update({f"videos/{key}/chunk_index": chunk, f"videos/{key}/file_index": file,
                    f"videos/{key}/from_timestamp": 0.0, f"videos/{key}/to_timestamp": n / cfg.fps})
        row.update({f"stats/{key}/{k}": v for k, v in image_stats(samples).items()})
    for key, values in columns.items():
        row.update({f"stats/{key}/{k}": v for k, v in vector_stats(values).items()})
    row.update({"meta/episodes/chunk_index": 0, "meta/episodes/file_index": 0})
    arrays = {key: (pa.FixedSizeListArray.from_arrays(pa.array(v.reshape(-1)), v.shape[1]) if v.ndim == 2
                    else pa.array(v)) for key, v in columns.items()}
    data_path = root / DATA_PATH.format(chunk_index=chunk, file_index=file)
    data_path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table(arrays), data_path, compression="snappy")
    return row, columns


def _columns(ep: Episode, e: int, first_index: int, fps: int) -> dict[str, np.ndarray]:
    """The data parquet's columns of episode ``e``: its features and LeRobot's bookkeeping (timestamp in s from the
    episode's first frame, frame_index, episode_index, index over the dataset, task_index)."""
    n = len(ep.grid_ns)
    return {**ep.vectors, "timestamp": (np.arange(n) / fps).astype(np.float32),
            "frame_index": np.arange(n, dtype=np.int64), "episode_index": np.full(n, e, dtype=np.int64),
            "index": first_index + np.arange(n, dtype=np.int64), "task_index": np.zeros(n, dtype=np.int64)}


def _write_meta(root: Path, cfg: DatasetConfig, joint_names: tuple[str, ...], rows: list[dict],
                columns: dict[str, list[np.ndarray]], cameras: dict[str, tuple[int, int, dict]],
                image_samples: dict[str, list[np.ndarray]]) -> None:
    """meta/: the episodes table, the tasks table (indexed by the task string), stats.json and info.json."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    (root / EPISODES_PATH).parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), root / EPISODES_PATH)
    tasks = pa.table({"task_index": pa.array([0], pa.int64()), "task": pa.array([cfg.task], pa.string())})
    tasks = tasks.replace_schema_metadata({b"pandas": _pandas_index_metadata(
        "task", [("task_index", "int64", "int64"), ("task", "unicode", "object")])})
    pq.write_table(tasks, root / "meta/tasks.parquet")
    stats = {key: vector_stats(np.concatenate(parts)) for key, parts in columns.items()}
    stats.update({f"observation.images.{c}": image_stats(np.concatenate(image_samples[c])) for c in sorted(cameras)})
    frames = sum(row["length"] for row in rows)
    info = {"codebase_version": CODEBASE_VERSION, "robot_type": cfg.robot_type, "total_episodes": len(rows),
            "total_frames": frames, "total_tasks": 1, "chunks_size": CHUNKS_SIZE, "data_files_size_in_mb": 100,
            "video_files_size_in_mb": 200, "fps": cfg.fps, "splits": {"train": f"0:{len(rows)}"},
            "data_path": DATA_PATH, "video_path": VIDEO_PATH if cameras else None,
            "features": build_features(joint_names, cfg.velocities, dict(sorted(cameras.items())),
                                       operator=[key for key in OPERATOR_POSES if key in columns])}
    (root / "meta/info.json").write_text(json.dumps(info, indent=4) + "\n")
    (root / "meta/stats.json").write_text(json.dumps(stats, indent=4) + "\n")


def export_dataset(sources: list[Path], out: Path, cfg: DatasetConfig, overwrite: bool = False) -> ExportSummary:
    """Write the bags ``sources`` (run directories, bag folders or .mcap files) as the episodes 0… of a new
    LeRobot dataset in the folder ``out``, one bag at a time. The dataset is written beside ``out`` (OUT.partial)
    and moved there once complete, so a failed export leaves nothing half-written."""
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise DatasetError("writing parquet needs pyarrow (pip install pyarrow)") from None
    started = time.monotonic()
    if out.exists() and (not out.is_dir() or any(out.iterdir())) and not overwrite:
        raise DatasetError(f"{out} exists: a dataset is written into a new folder (or --overwrite)")
    for source in sources:
        if not source.exists():
            raise DatasetError(f"{source} does not exist: give a run directory, a bag folder or a .mcap file")
    joint_names = cfg.joint_names
    if not joint_names:
        from g1_teleop.core.robot_description import load_robot

        joint_names = load_robot().joint_names
    work = out.with_name(out.name + ".partial")
    shutil.rmtree(work, ignore_errors=True)
    rows: list[dict] = []
    columns: dict[str, list[np.ndarray]] = {}
    cameras: dict[str, tuple[int, int, dict]] = {}
    image_samples: dict[str, list[np.ndarray]] = {}
    ages: dict[str, float] = {}
    columns_of: list[str] = []
    try:
        for source in sources:
            for ep in episodes_from_bag(Path(source), cfg, joint_names):
                if rows and (sorted(ep.cameras) != sorted(cameras) or sorted(ep.vectors) != sorted(columns_of)):
                    raise DatasetError(f"{source} has the features {sorted(ep.vectors)} and cameras "
                                       f"{sorted(ep.cameras) or 'none'}, {sources[0]} {sorted(columns_of)} and "
                                       f"{sorted(cameras) or 'none'}: every episode needs the same features (or "
                                       "--no-images, --no-operator)")
                columns_of = list(ep.vectors)
                row, data = _write_episode(work, len(rows), sum(r["length"] for r in rows), ep, cfg, cameras,
                                           image_samples)
                rows.append(row)
                for key, values in data.items():
                    columns.setdefault(key, []).append(values)
                for name, age in ep.max_age_s.items():
                    ages[name] = max(age, ages.get(name, 0.0))
        if not rows:
            raise DatasetError(f"no episode to write: the operator discarded every episode of {sources}")
        _write_meta(work, cfg, joint_names, rows, columns, cameras, image_samples)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    if out.exists():
        shutil.rmtree(out) if out.is_dir() else out.unlink()
    work.rename(out)
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    return ExportSummary(out, len(rows), sum(r["length"] for r in rows), cfg.fps, sorted(cameras),
                         time.monotonic() - started, size, ages)


def add_arguments(parser: argparse.ArgumentParser, with_sources: bool = True) -> None:
    """The export's options (``with_sources``: the BAG… OUT positionals of `g1-teleop dataset`)."""
    if with_sources:
        parser.add_argument("sources", nargs="+", type=Path, metavar="BAG",
                            help="bags, one episode each: a run directory (g1-teleop sim), a bag folder or a .mcap")
        parser.add_argument("out", type=Path, metavar="OUT", help="the dataset folder (new)")
        parser.add_argument("--overwrite", action="store_true", help="replace OUT if it exists")
    parser.add_argument("--task", default=DEFAULT_TASK, help=f"the episodes' task string (default {DEFAULT_TASK!r})")
    parser.add_argument("--fps", type=int, default=50, help="frames per second of the graph's clock (default 50: "
                        "the command rate)")
    parser.add_argument("--no-velocities", dest="velocities", action="store_false",
                        help="leave out observation.velocity (measured joint velocities)")
    parser.add_argument("--no-images", dest="images", action="store_false",
                        help="leave out the eyes' images even when the bag has them")
    parser.add_argument("--vcodec", default="libsvtav1", help="PyAV video encoder (default libsvtav1: AV1, as "
                        "LeRobot); e.g. libx264")
    parser.add_argument("--no-operator", dest="operator", action="store_false",
                        help="leave out observation.operator.* (the operator's wrists and head) even when the bag has "
                             "them")
    parser.add_argument("--episode-buttons", default="2,3", metavar="TOGGLE,DISCARD",
                        help="Joy buttons that marked the episodes during the recording: TOGGLE starts and ends one, "
                             "DISCARD drops the open or the last one (default 2,3: X and Y); a bag without a start "
                             "press is one episode")
    parser.add_argument("--whole-bags", action="store_true", help="one episode per bag, the buttons' marks ignored")


def config_from_args(args: argparse.Namespace) -> DatasetConfig:
    return DatasetConfig(fps=args.fps, task=args.task, velocities=args.velocities, images=args.images,
                         vcodec=args.vcodec, operator=args.operator,
                         episode_buttons=None if args.whole_bags else parse_episode_buttons(args.episode_buttons))


def run_export(sources: list[Path], out: Path, cfg: DatasetConfig, overwrite: bool = False,
               prog: str = "g1-teleop dataset") -> int:
    """Export and print the summary (JSON); a clear one-line error and exit code 2 when it cannot."""
    try:
        summary = export_dataset(sources, out, cfg, overwrite=overwrite)
    except DatasetError as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 2
    figures = summary.as_dict()
    print(json.dumps(figures, indent=2))
    stale = {k: v for k, v in summary.max_age_s.items() if v > 5.0 / cfg.fps}
    if stale:
        print(f"{prog}: note: some frames hold samples older than 5 frames ({stale}): the recording has gaps",
              file=sys.stderr)
    print(f"dataset: {out.resolve()}")
    return 0


def main_from_args(args: argparse.Namespace) -> int:
    return run_export(args.sources, args.out, config_from_args(args), overwrite=args.overwrite)
