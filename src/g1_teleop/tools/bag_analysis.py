"""What a bag of the graph says about a run, ROS-free: the run's Recording, the mode timeline, the safety and
diagnostics events, the loop periods and the real-time factor.

:func:`recording_from_bag` reads the topics the main job's recorder (tools/run_recorder.py) subscribes to with
the same rules (one sample per stamp, in arrival order; a wrist pair once both wrists of a stamp are in), so
that a run directory's recording.npz and its bag give the same figures. Times: the graph's clock (message
stamps, simulated time in a simulation) for what the robot did; the publish times (system clock, when each
message was written) for how fast the graph ran.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from g1_teleop.core.joint_vector import JointIndex, MalformedJointMessage
from g1_teleop.core.robot_description import ARM_INDICES
from g1_teleop.core.rosbag import Bag, BagMessage, read_bag
from g1_teleop.tools.run_recording import Recording, RecordingBuffer

REPORT_TOPICS = ("joint_states", "joint_command", "teleop/arm_target", "odom", "teleop/trace", "xr/left_wrist",
                 "xr/right_wrist", "/clock", "teleop/mode", "diagnostics", "robot_description")


def stamp_of(msg) -> int:
    """A message's header stamp (ns)."""
    return msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec


def time_ns(t) -> int:
    """A builtin_interfaces/Time in ns."""
    return t.sec * 1_000_000_000 + t.nanosec


def first_by_stamp(messages: list[BagMessage]) -> dict[int, BagMessage]:
    """The first publication of each stamp (lockstep graphs publish a stamp again while they wait)."""
    out: dict[int, BagMessage] = {}
    for m in messages:
        out.setdefault(stamp_of(m.msg), m)
    return out


def read_run_bag(path: str | Path, keep_damaged: bool = True) -> Bag:
    """The topics the report and the latency figures need, from the bag at ``path``."""
    return read_bag(path, REPORT_TOPICS, keep_damaged=keep_damaged)


def is_simulated(bag: Bag) -> bool:
    """The graph ran on a simulated clock (/clock in the bag)."""
    return bool(bag.get("/clock"))


def time_origin_ns(bag: Bag) -> int:
    """The origin of the report's time axis: 0 for a simulation (its clock starts at 0), else the first stamp of
    joint_states (the graph's clock is the system's: seconds since 1970)."""
    if is_simulated(bag):
        return 0
    states = bag.get("joint_states")
    return stamp_of(states[0].msg) if states else 0


def recording_from_bag(bag: Bag, joint_names: tuple[str, ...]) -> Recording:
    """The Recording the main job's recorder would have made from these messages (times: the graph's clock, s)."""
    joints = JointIndex(joint_names)
    buffer, last = RecordingBuffer(), {}

    def new(stream: str, stamp: int) -> bool:
        if stamp <= last.get(stream, -1):
            return False
        last[stream] = stamp
        return True

    events: list[tuple[int, int, str, object]] = []  # (log time, order, stream, msg): the arrival order
    for topic in ("joint_states", "joint_command", "teleop/arm_target", "odom", "teleop/trace", "xr/left_wrist",
                  "xr/right_wrist"):
        events += [(m.log_time_ns, m.publish_time_ns, topic, m.msg) for m in bag.get(topic)]
    events.sort(key=lambda e: (e[0], e[1]))
    wrists: dict[int, dict[str, tuple[float, float, float]]] = {}
    for _, _, topic, msg in events:
        stamp = stamp_of(msg)
        try:
            if topic == "joint_states":
                vec = joints.parse(msg.name, msg.position, msg.velocity, need_velocity=True)
                if new("state", stamp):
                    buffer.add(state_t=stamp / 1e9, state_q=vec.position, state_dq=vec.velocity)
            elif topic == "joint_command":
                vec = joints.parse(msg.name, msg.position, msg.velocity, msg.effort)
                if new("command", stamp):
                    tau = vec.effort if vec.effort is not None else 0.0 * vec.position
                    buffer.add(command_t=stamp / 1e9, command_q=vec.position, command_tau=tau)
            elif topic == "teleop/arm_target":
                q_arm = joints.parse(msg.name, msg.position, require_all=False).position[ARM_INDICES]
                if not np.isnan(q_arm).any() and new("arm_target", stamp):  # (the waist may come too)
                    buffer.add(arm_target_t=stamp / 1e9, arm_target_q=q_arm)
        except MalformedJointMessage:
            continue
        if topic == "odom" and new("odom", stamp):
            p, o = msg.pose.pose.position, msg.pose.pose.orientation
            buffer.add(odom_t=stamp / 1e9, odom_p=(p.x, p.y, p.z), odom_q=(o.w, o.x, o.y, o.z))
        elif topic == "teleop/trace" and new("trace", stamp):
            buffer.add(trace_t=stamp / 1e9, trace_origin_t=time_ns(msg.time_ref) / 1e9)
        elif topic.startswith("xr/"):
            side = topic.removeprefix("xr/").removesuffix("_wrist")
            p = msg.pose.position
            pair = wrists.setdefault(stamp, {})
            pair[side] = (p.x, p.y, p.z)
            if len(pair) == 2:
                del wrists[stamp]
                if new("wrist", stamp):
                    buffer.add(wrist_t=stamp / 1e9, wrist_left=pair["left"], wrist_right=pair["right"])
            for old in [s for s in wrists if s < stamp - 1_000_000_000]:
                del wrists[old]
    return buffer.freeze()


def shift_recording(rec: Recording, origin_s: float) -> Recording:
    """The recording with every time minus ``origin_s``."""
    if not origin_s:
        return rec
    times = ("state_t", "command_t", "arm_target_t", "wrist_t", "odom_t", "trace_t", "trace_origin_t")
    return Recording(**{name: (value - origin_s if name in times else value) for name, value in vars(rec).items()})


@dataclass(frozen=True)
class Event:
    t_s: float  # the graph's time (report axis)
    source: str  # a node (diagnostics) or "teleop/mode"
    level: int  # diagnostic_msgs/DiagnosticStatus level: 0 OK, 1 WARN, 2 ERROR, 3 STALE
    message: str


def mode_timeline(bag: Bag, origin_ns: int) -> list[tuple[float, str]]:
    """(time s, mode) at each teleop/mode message (time: its log time)."""
    return [((m.log_time_ns - origin_ns) / 1e9, m.msg.data) for m in bag.get("teleop/mode")]


def diagnostics_events(bag: Bag, origin_ns: int) -> list[Event]:
    """Every change of a node's diagnostics level or message (hw_bridge's safety transitions are its messages:
    'STATE: why'), in time order; a node's first status counts as a change."""
    last: dict[str, tuple[int, str]] = {}
    events = []
    for m in bag.get("diagnostics"):
        for status in m.msg.status:
            key = (int(status.level), status.message)
            if last.get(status.name) != key:
                last[status.name] = key
                events.append(Event((m.log_time_ns - origin_ns) / 1e9, status.name, key[0], status.message))
    return events


def diagnostics_values(bag: Bag, node_suffix: str) -> dict[str, str]:
    """The last key/values a node (name ending with ``node_suffix``) published on diagnostics."""
    values: dict[str, str] = {}
    for m in bag.get("diagnostics"):
        for status in m.msg.status:
            if status.name.endswith(node_suffix):
                values = {kv.key: kv.value for kv in status.values}
    return values


@dataclass(frozen=True)
class Periods:
    """The periods between a stream's first publications of successive stamps."""

    topic: str
    t_s: np.ndarray  # the graph's time of each period's end (report axis)
    wall_ms: np.ndarray  # between publish times (system clock): the loop as it ran
    nominal_ms: float  # the median of the stamps' periods (the loop's intended period)

    def figures(self) -> dict[str, float | int | None]:
        name = self.topic.replace("/", "_")
        if not len(self.wall_ms):
            return {f"{name}_periods": 0}
        jitter = np.abs(self.wall_ms - self.nominal_ms)
        return {f"{name}_periods": len(self.wall_ms), f"{name}_period_nominal_ms": round(self.nominal_ms, 3),
                f"{name}_period_p50_ms": round(float(np.percentile(self.wall_ms, 50)), 3),
                f"{name}_period_p99_ms": round(float(np.percentile(self.wall_ms, 99)), 3),
                f"{name}_period_max_ms": round(float(self.wall_ms.max()), 3),
                f"{name}_jitter_p99_ms": round(float(np.percentile(jitter, 99)), 3)}


def periods(bag: Bag, topic: str, origin_ns: int) -> Periods:
    """``topic``'s loop periods: publish time differences of the first publication of each new stamp."""
    firsts = sorted(first_by_stamp(bag.get(topic)).items())
    if len(firsts) < 2:
        return Periods(topic, np.zeros(0), np.zeros(0), float("nan"))
    stamps = np.array([s for s, _ in firsts], dtype=np.int64)
    published = np.array([m.publish_time_ns for _, m in firsts], dtype=np.int64)
    return Periods(topic, (stamps[1:] - origin_ns) / 1e9, np.diff(published) / 1e6,
                   float(np.median(np.diff(stamps))) / 1e6)


@dataclass(frozen=True)
class RealTime:
    """The graph's clock against the system clock, from /clock's messages (a simulation) or joint_states'."""

    wall_s: np.ndarray  # publish times, from the first
    graph_s: np.ndarray  # the clock's values, from the first
    window_s: float  # the local factor is over this much wall time
    factor_t_s: np.ndarray  # the graph's time at the end of each window (report axis)
    factor: np.ndarray  # graph time / wall time over each window

    @property
    def overall(self) -> float | None:
        return float(self.graph_s[-1] / self.wall_s[-1]) if len(self.wall_s) > 1 and self.wall_s[-1] > 0 else None


def real_time(bag: Bag, origin_ns: int, window_s: float = 1.0) -> RealTime:
    """Simulated time against wall time (publish times of /clock); for a graph on the system clock, its
    joint_states stamps against their publish times (a factor of 1 unless stamps and clock disagree)."""
    clock = bag.get("/clock")
    if clock:
        pairs = {}
        for m in clock:
            pairs.setdefault(time_ns(m.msg.clock), m.publish_time_ns)
    else:
        pairs = {s: m.publish_time_ns for s, m in first_by_stamp(bag.get("joint_states")).items()}
    if len(pairs) < 2:
        empty = np.zeros(0)
        return RealTime(empty, empty, window_s, empty, empty)
    graph = np.array(sorted(pairs), dtype=np.int64)
    wall = np.array([pairs[g] for g in graph], dtype=np.int64)
    wall_s, graph_s = (wall - wall[0]) / 1e9, (graph - graph[0]) / 1e9
    ends = np.arange(window_s, wall_s[-1] + 1e-9, window_s)
    idx_end = np.searchsorted(wall_s, ends, side="right") - 1
    idx_start = np.searchsorted(wall_s, ends - window_s, side="left")
    ok = idx_end > idx_start
    dw = wall_s[idx_end[ok]] - wall_s[idx_start[ok]]
    dg = graph_s[idx_end[ok]] - graph_s[idx_start[ok]]
    t = (graph[idx_end[ok]] - origin_ns) / 1e9
    return RealTime(wall_s, graph_s, window_s, t, np.divide(dg, dw, out=np.zeros_like(dg), where=dw > 0))
