"""`g1-teleop latency`: per-hop latency of the graph, from a bag or live, p50/p95/p99 per hop.

Each operator sample is followed through the graph by its stamp: xr_input stamps xr/left_wrist and
xr/right_wrist with the sample's time, retarget stamps teleop/arm_target with it, and teleop/trace links each
joint_command (by its stamp) to the sample behind its arm targets. The times are the publish times the bag
recorder stores (DDS source timestamps: when each node wrote the message, system clock), and the operator
sample's own time (its stamp: on the system clock in a real graph; in a simulation the wall time at which the
simulated clock reached it, from /clock's publish times). Hops:

* ``operator_to_xr``: operator sample → xr/* published (the later of the two wrists);
* ``xr_to_arm_target``: → teleop/arm_target published (retarget's IK);
* ``arm_target_to_tick``: → the policy's tick that first uses it: scheduling, the wait for the next 50 Hz tick
  (zero in lockstep, where the arm target starts the tick). A tick starts: lockstep, when its state and its
  arm target are both in; real-time simulation, when /clock reaches the tick's stamp; on the system clock, on
  the policy timer's 50 Hz grid, fitted under the commands' stamps (the ticks that were on time; the policy
  stamps a real-time command after its controller step, so the step counts in ``tick_to_command``);
* ``tick_to_command``: tick → joint_command published (the controller's step);
* ``operator_to_command``: operator sample → joint_command published, the wait included;
* ``operator_to_command_without_wait``: the same without the wait for the tick (the goal: p99 ≤ 5 ms);
* ``command_to_lowcmd``: joint_command published → the first LowCmd written carrying its arm targets (its DDS
  source timestamp, as the publish times above), and ``operator_to_lowcmd`` (the goal in real.launch.py: p99 ≤ 25
  ms). The robot's DDS is not in a bag and hw_bridge's diagnostics carry no per-command latency: measured live only,
  by listening on the robot's DDS (``--robot-interface``), the commands matched by their 14 arm targets (float32
  in the LowCmd).

Only operator samples a command used are counted for the hops from the arm target on; xr_input may sample
faster than the policy ticks.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from g1_teleop.core.joint_vector import JointIndex, MalformedJointMessage
from g1_teleop.core.robot_description import ARM_INDICES
from g1_teleop.core.rosbag import Bag, BagError
from g1_teleop.tools.bag_analysis import first_by_stamp, is_simulated, read_run_bag, stamp_of, time_ns

HOPS: dict[str, str] = {
    "operator_to_xr": "operator sample → xr/* published",
    "xr_to_arm_target": "xr/* published → teleop/arm_target published",
    "arm_target_to_tick": "teleop/arm_target → the policy tick using it (scheduling: wait for the 50 Hz tick)",
    "tick_to_command": "policy tick → joint_command published",
    "operator_to_command": "operator sample → joint_command published (tick wait included)",
    "operator_to_command_without_wait": "operator sample → joint_command, the tick wait subtracted",
    "command_to_lowcmd": "joint_command published → LowCmd written",
    "operator_to_lowcmd": "operator sample → LowCmd written",
}
GOALS_MS = {"operator_to_command_without_wait": 5.0, "operator_to_lowcmd": 25.0}  # p99, the goals
LOWCMD_MATCH_RAD = 1e-5  # float32 of a target within this: the LowCmd carries it
LOWCMD_WINDOW_S = 0.5  # a command whose LowCmd has not come by then is not carried (limited, replaced, not ACTIVE)
LOWCMD_HISTORY = 1000  # LowCmds kept between two takes of the live listener: 2 s at 500 Hz
NO_LOWCMD = ("the robot's DDS is not in a bag and hw_bridge's diagnostics carry no per-command latency: measure "
             "live with `g1-teleop latency --duration S --robot-interface IF --robot-domain-id N`")


@dataclass(frozen=True)
class LowCmdWrites:
    """LowCmds as the bridge wrote them, heard on the robot's DDS: write times (DDS source timestamps, system-clock
    ns) and the 29 targets (DDS order)."""

    t_ns: np.ndarray  # (N,)
    q: np.ndarray  # (N, 29)


@dataclass
class HopLatencies:
    clock: str  # lockstep simulation | real-time simulation | system clock
    ms: dict[str, np.ndarray]  # per hop, one value per measured sample (ms)
    unmeasured: dict[str, str] = field(default_factory=dict)  # hop → why not
    counts: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def figures(self) -> dict[str, object]:
        """JSON-ready: per hop its description, count and p50/p95/p99/max (ms), or why it is not measured."""
        hops: dict[str, object] = {}
        for hop, text in HOPS.items():
            values = self.ms.get(hop)
            if values is None or not len(values):
                hops[hop] = {"hop": text, "measured": False,
                             "why": self.unmeasured.get(hop, "no sample of this hop in the source")}
                continue
            entry: dict[str, object] = {"hop": text, "measured": True, "count": len(values)}
            entry.update({f"p{p}_ms": round(float(np.percentile(values, p)), 3) for p in (50, 95, 99)})
            entry["max_ms"] = round(float(values.max()), 3)
            if hop in GOALS_MS:
                entry["goal_p99_ms"] = GOALS_MS[hop]
                entry["goal_met"] = bool(entry["p99_ms"] <= GOALS_MS[hop])
            hops[hop] = entry
        return {"clock": self.clock, "counts": self.counts, "hops": hops, "notes": self.notes}


class _WallClock:
    """The system-clock time at which the graph's clock read a stamp: /clock's publish times in a simulation
    (the first /clock at or after the stamp), the stamp itself on the system clock."""

    def __init__(self, bag: Bag) -> None:
        pairs: dict[int, int] = {}
        for m in bag.get("/clock"):
            pairs.setdefault(time_ns(m.msg.clock), m.publish_time_ns)
        self.graph = np.array(sorted(pairs), dtype=np.int64)
        self.wall = np.array([pairs[g] for g in self.graph], dtype=np.int64)

    def __call__(self, stamp: int) -> int | None:
        if not len(self.graph):
            return stamp
        i = int(np.searchsorted(self.graph, stamp, side="left"))
        return int(self.wall[i]) if i < len(self.graph) else None


def clock_kind(bag: Bag) -> str:
    """How the graph ran: lockstep simulation (every state answered by a command of its stamp), real-time
    simulation, or on the system clock (no /clock: a real graph)."""
    if not is_simulated(bag):
        return "system clock"
    states = set(first_by_stamp(bag.get("joint_states")))
    commands = set(first_by_stamp(bag.get("joint_command")))
    answered = len(states & commands)
    return "lockstep simulation" if states and answered >= 0.9 * len(states) else "real-time simulation"


def tick_grid(stamps_ns: np.ndarray) -> np.ndarray:
    """Due times of a periodic timer that produced ``stamps_ns`` (each taken some time after its tick's due
    time, never before): the line n·P + φ under every stamp that touches the most of them (the lower convex hull's
    edge at the middle tick: the ticks that were on time), n the tick's index (skipped ticks counted)."""
    if len(stamps_ns) < 3:
        return stamps_ns.copy()
    rel = (stamps_ns - stamps_ns[0]).astype(float)
    n = np.round(rel / float(np.median(np.diff(rel))))
    hull: list[int] = []  # lower convex hull of (n, rel), n increasing
    for k in np.argsort(n, kind="stable"):
        while len(hull) >= 2:
            (x0, y0), (x1, y1) = (n[hull[-2]], rel[hull[-2]]), (n[hull[-1]], rel[hull[-1]])
            if (x1 - x0) * (rel[k] - y0) - (y1 - y0) * (n[k] - x0) <= 0:
                hull.pop()
            else:
                break
        hull.append(int(k))
    middle = float(n.mean())
    i = next((i for i in range(len(hull) - 1) if n[hull[i + 1]] >= middle), len(hull) - 2)
    a, b = hull[i], hull[i + 1]
    slope = (rel[b] - rel[a]) / (n[b] - n[a]) if n[b] != n[a] else float(np.median(np.diff(rel)))
    return stamps_ns[0] + np.round(rel[a] + (n - n[a]) * slope).astype(np.int64)


def hop_latencies(bag: Bag, lowcmds: LowCmdWrites | None = None,
                  joint_names: tuple[str, ...] | None = None) -> HopLatencies:
    """Every hop's latencies (ms) from the bag's messages (and the LowCmds of a live listener)."""
    kind = clock_kind(bag)
    clock = bag.get("/clock")
    if clock and all(m.publish_time_ns == m.log_time_ns for m in clock):
        why = ("the bag has no publish times (its messages carry the simulated log time twice: recorded before "
               "g1_teleop stored DDS source timestamps): record it again")
        return HopLatencies(kind, {hop: np.zeros(0) for hop in HOPS}, dict.fromkeys(HOPS, why))
    wall = _WallClock(bag)
    left, right = first_by_stamp(bag.get("xr/left_wrist")), first_by_stamp(bag.get("xr/right_wrist"))
    arm = first_by_stamp(bag.get("teleop/arm_target"))
    commands = first_by_stamp(bag.get("joint_command"))
    trace = sorted((stamp_of(m.msg), time_ns(m.msg.time_ref)) for m in first_by_stamp(bag.get("teleop/trace")).values())
    out = HopLatencies(kind, {hop: np.zeros(0) for hop in HOPS})
    samples: dict[int, tuple[int, int, int]] = {}  # stamp → (operator time, xr published, arm target published)
    for stamp, a in arm.items():
        if stamp in left and stamp in right and (t_op := wall(stamp)) is not None:
            samples[stamp] = (t_op, max(left[stamp].publish_time_ns, right[stamp].publish_time_ns),
                              a.publish_time_ns)
    rows = np.array(list(samples.values()), dtype=np.int64).reshape(-1, 3)
    out.ms["operator_to_xr"] = (rows[:, 1] - rows[:, 0]) / 1e6
    out.ms["xr_to_arm_target"] = (rows[:, 2] - rows[:, 1]) / 1e6

    command_stamps = np.array(sorted(commands), dtype=np.int64)
    grid = dict(zip(command_stamps.tolist(), tick_grid(command_stamps).tolist(), strict=True)) \
        if kind == "system clock" else {}
    used: set[int] = set()
    per_command: list[tuple[int, int, int, int]] = []  # (operator time, arm published, tick start, command published)
    origin_of: dict[int, int] = {}
    for c, s in trace:
        origin_of[c] = s
        if s in used or s not in samples or c not in commands:
            continue
        used.add(s)
        t_op, _, t_arm = samples[s]
        due = grid.get(c) if grid else wall(c)
        if due is None:
            continue
        per_command.append((t_op, t_arm, max(due, t_arm), commands[c].publish_time_ns))
    rows = np.array(per_command, dtype=np.int64).reshape(-1, 4)
    wait = (rows[:, 2] - rows[:, 1]) / 1e6
    out.ms["arm_target_to_tick"] = wait
    out.ms["tick_to_command"] = (rows[:, 3] - rows[:, 2]) / 1e6
    out.ms["operator_to_command"] = (rows[:, 3] - rows[:, 0]) / 1e6
    out.ms["operator_to_command_without_wait"] = out.ms["operator_to_command"] - wait
    out.counts = {"operator_samples": len(samples), "commands": len(commands), "traced_commands": len(trace),
                  "samples_used_by_a_command": len(per_command)}
    if kind != "lockstep simulation" and kind != "system clock":
        out.notes.append("real-time simulation: a tick starts when /clock reaches its stamp (its publish time)")
    elif kind == "system clock":
        out.notes.append("system clock: a tick starts on the policy timer's 50 Hz grid, fitted under the "
                         "commands' stamps (the ticks that were on time)")
    if lowcmds is None:
        for hop in ("command_to_lowcmd", "operator_to_lowcmd"):
            out.unmeasured[hop] = NO_LOWCMD
    else:
        _lowcmd_hops(out, bag, commands, origin_of, wall, lowcmds, joint_names)
    if not len(samples):
        why = "no operator sample with both wrists and its arm target in the source (is xr_input publishing?)"
        for hop in HOPS:
            out.unmeasured.setdefault(hop, why)
    return out


def _lowcmd_hops(out: HopLatencies, bag: Bag, commands: dict, origin_of: dict[int, int], wall: _WallClock,
                 lowcmds: LowCmdWrites, joint_names: tuple[str, ...] | None) -> None:
    """Match each command whose arm targets differ from the previous one's to the first LowCmd carrying them."""
    if joint_names is None:
        from g1_teleop.core.robot_description import load_robot

        joint_names = load_robot().joint_names
    index, arm = JointIndex(joint_names), list(ARM_INDICES)
    lowcmd_arm = lowcmds.q[:, arm].astype(np.float32).astype(float) if len(lowcmds.t_ns) else np.zeros((0, 14))
    command_ms, operator_ms, missing, previous = [], [], 0, None
    for c in sorted(commands):
        m = commands[c]
        try:
            q = index.parse(m.msg.name, m.msg.position).position[arm].astype(np.float32).astype(float)
        except MalformedJointMessage:
            continue
        if previous is not None and np.max(np.abs(q - previous)) < LOWCMD_MATCH_RAD:
            continue  # the same arm targets as the command before: not identifiable
        previous = q
        t_pub = m.publish_time_ns
        start = int(np.searchsorted(lowcmds.t_ns, t_pub, side="left"))
        end = int(np.searchsorted(lowcmds.t_ns, t_pub + int(LOWCMD_WINDOW_S * 1e9), side="right"))
        hits = np.flatnonzero(np.max(np.abs(lowcmd_arm[start:end] - q), axis=1) < LOWCMD_MATCH_RAD) \
            if end > start else []
        if not len(hits):
            missing += 1
            continue
        t_low = int(lowcmds.t_ns[start + hits[0]])
        command_ms.append((t_low - t_pub) / 1e6)
        s = origin_of.get(c)
        t_op = wall(s) if s is not None else None
        if t_op is not None:
            operator_ms.append((t_low - t_op) / 1e6)
    out.ms["command_to_lowcmd"] = np.array(command_ms)
    out.ms["operator_to_lowcmd"] = np.array(operator_ms)
    out.counts.update({"lowcmds": len(lowcmds.t_ns), "commands_matched_to_a_lowcmd": len(command_ms),
                       "commands_not_carried": missing})
    if not len(lowcmds.t_ns):
        why = "no LowCmd heard on rt/lowcmd: is hw_bridge writing (its diagnostics), on that interface and domain?"
        out.unmeasured.update(dict.fromkeys(("command_to_lowcmd", "operator_to_lowcmd"), why))
    elif not command_ms:
        why = ("no command's arm targets reached a LowCmd: was hw_bridge ACTIVE (`g1-teleop call start`, then "
               "`activate`; its diagnostics say its state)?")
        out.unmeasured.update(dict.fromkeys(("command_to_lowcmd", "operator_to_lowcmd"), why))
    if missing:
        out.notes.append(f"{missing} commands with new arm targets reached no LowCmd within {LOWCMD_WINDOW_S} s "
                         "(the bridge not ACTIVE, its limits, or a newer command first)")


# -- live ------------------------------------------------------------------------------------------------------


class LowCmdListener:
    """rt/lowcmd on the robot's DDS (a reader only, ``LOWCMD_HISTORY`` deep, taken by ``poll``): each LowCmd's write
    time and its 29 targets. The write time is the sample's DDS source timestamp (the bridge's system clock, as the
    graph's publish times): what this process's own wake-ups add on busy cores does not count."""

    def __init__(self, domain_id: int, interface: str) -> None:
        from g1_teleop.hardware.lowcmd import NUM_BODY_JOINTS, lowcmd_from_cdr, unpack_lowcmd
        from g1_teleop.hardware.robot_dds import TOPIC_LOWCMD, RobotDds

        self._decode = lambda sample: unpack_lowcmd(lowcmd_from_cdr(sample)).q[:NUM_BODY_JOINTS]
        self.t_ns: list[int] = []
        self.q: list[np.ndarray] = []
        self.dds = RobotDds(domain_id, interface)
        self._reader = self.dds.raw_reader(TOPIC_LOWCMD, history=LOWCMD_HISTORY)

    def poll(self) -> None:
        """Take the LowCmds written since the last poll."""
        for sample, written_s in self._reader.take_timed():
            try:
                self.q.append(self._decode(sample))
            except ValueError:
                continue
            self.t_ns.append(round(written_s * 1e9))

    def writes(self) -> LowCmdWrites:
        self.poll()
        return LowCmdWrites(np.array(self.t_ns, dtype=np.int64), np.array(self.q, dtype=float).reshape(-1, 29))

    def close(self) -> None:
        self.dds.close()


LIVE_TOPICS = ["xr/left_wrist", "xr/right_wrist", "teleop/arm_target", "teleop/trace", "joint_command"]
LIVE_SIM_TOPICS = ["/clock", "joint_states"]  # a simulation's clock, and its states to tell lockstep apart


def record_live(duration_s: float, out: Path, namespace: str = "", use_sim_time: bool = False,
                robot_interface: str = "", robot_domain_id: int = 0) -> LowCmdWrites | None:
    """Record the graph's timing topics into a bag at ``out`` for ``duration_s`` wall seconds (as `g1-teleop
    record` does), and with ``robot_interface`` the LowCmds on the robot's DDS meanwhile."""
    import rclpy

    from g1_teleop.ros.executor import make_executor
    from g1_teleop.tools.bag_recorder import BagRecorder

    listener = LowCmdListener(robot_domain_id, robot_interface) if robot_interface else None
    rclpy.init()
    topics = LIVE_TOPICS + (LIVE_SIM_TOPICS if use_sim_time else [])  # (no more: the listener loads the graph)
    recorder = BagRecorder(out, topics=topics, use_sim_time=use_sim_time, namespace=namespace,
                           node_name="latency_recorder")
    executor = make_executor()
    executor.add_node(recorder)
    try:
        end = time.monotonic() + duration_s
        while time.monotonic() < end:
            executor.spin_once(timeout_sec=0.05)
            if listener is not None:
                listener.poll()
    finally:
        recorder.close()
        executor.shutdown()
        recorder.destroy_node()
        rclpy.try_shutdown()
        if listener is not None:
            writes = listener.writes()
            listener.close()
    return writes if listener is not None else None


def measure(bag_path: str | None, duration_s: float = 10.0, namespace: str = "", use_sim_time: bool = False,
            robot_interface: str = "", robot_domain_id: int = 0) -> dict[str, object]:
    """The latency figures of a bag, or of the running graph over ``duration_s``."""
    if bag_path:
        if robot_interface:
            raise ValueError("--robot-interface listens to a running robot: give no bag with it")
        bag = read_run_bag(bag_path)
        result = hop_latencies(bag)
        source = {"source": "bag", "bag": str(bag.folder)}
    else:
        with tempfile.TemporaryDirectory(prefix="g1_latency_") as tmp:
            lowcmds = record_live(duration_s, Path(tmp) / "bag", namespace, use_sim_time, robot_interface,
                                  robot_domain_id)
            bag = read_run_bag(Path(tmp) / "bag")
            result = hop_latencies(bag, lowcmds)
        source = {"source": "live", "duration_s": duration_s}
        if not bag.get("joint_command"):
            result.notes.append("no joint_command heard: is the graph running on this ROS_DOMAIN_ID "
                                f"({'namespace ' + namespace if namespace else 'no namespace'})?")
    if bag.damage is not None:
        result.notes.append(str(bag.damage))
    return {**source, **result.figures()}


def print_table(figures: dict[str, object], file=sys.stdout) -> None:
    """The figures as a table a person reads."""
    print(f"clock: {figures['clock']}; {json.dumps(figures['counts'])}", file=file)
    for entry in figures["hops"].values():  # type: ignore[union-attr]
        if entry["measured"]:
            goal = ""
            if "goal_p99_ms" in entry:
                goal = f"  goal p99 ≤ {entry['goal_p99_ms']:g} ms: {'met' if entry['goal_met'] else 'NOT met'}"
            print(f"  {entry['hop']:<78} p50 {entry['p50_ms']:7.3f}  p95 {entry['p95_ms']:7.3f}  "
                  f"p99 {entry['p99_ms']:7.3f} ms  (n={entry['count']}){goal}", file=file)
        else:
            print(f"  {entry['hop']:<78} not measured: {entry['why']}", file=file)
    for note in figures["notes"]:  # type: ignore[union-attr]
        print(f"note: {note}", file=file)


def main_from_args(args) -> int:
    """`g1-teleop latency` (cli.py)."""
    try:
        figures = measure(args.bag, args.duration, args.namespace, args.use_sim_time, args.robot_interface,
                          args.robot_domain_id)
    except (BagError, ValueError, OSError) as exc:
        print(f"g1-teleop latency: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(figures))
    else:
        print_table(figures)
    return 0

