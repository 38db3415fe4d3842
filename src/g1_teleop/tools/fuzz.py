"""`g1-teleop bench fuzz`: property-based fuzzing (hypothesis) of the nodes' inputs with the real graph running.

The simulation graph runs in real time (sim_bridge, policy, retarget, xr_input, robot_state as processes, no
gantry). hypothesis draws the messages (seeded, generated before the graph starts): wrong lengths, NaN/Inf,
huge finite values (±1.8e308), unknown and duplicate joint names, zero and non-unit quaternions, stamps zero,
far in the past or future, plausible-looking spoofs of the robot's state, mode names and any text, clocks with
negative seconds; each topic's messages go out in bursts at 1 kHz, round robin over the topics, interleaved
with the graph's own traffic. Phases:

- ``baseline``: nothing sent; the same figures without fuzzing, at the same load, to compare with;
- ``state`` and ``operator``: every input of the policy node — the robot's state (joint_states, imu, /clock;
  first a few /clock messages with negative seconds, which rclpy's time source refuses: no node may die of
  it), then the operator's (teleop/arm_target, joy, cmd_vel, teleop/squat_height, teleop/heading,
  teleop/mode_request, calls of teleop/squat and teleop/locomotion), apart so that a fall tells which kind of
  input caused it;
- ``retarget``: xr/head, xr/left_wrist, xr/right_wrist (retarget's inputs);
- ``sim_bridge``: joint_command (the simulator's input; these marked with frame_id ``fuzz``).

Observed meanwhile (in this process): every joint_command the policy publishes, checked against the robot's
limits (29 joints in order, finite, q within the joint limits, |dq| ≤ velocity limit, |τ| ≤ effort limit); the
rate of joint_command, teleop/arm_target and the simulator's joint_states per wall second; the graph's messages
(xr/*, teleop/arm_target, joint_command) stamped more than 1 s off the simulation's time; mode switches; the
pelvis height (odom); each node's log lines per wall second; nodes that died. Messages this process sends carry
frame_id ``fuzz`` where they have a header, so that the observers tell them apart.
"""

from __future__ import annotations

import ast
import contextlib
import math
import re
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

FUZZ_FRAME = "fuzz"
FUZZ_DOMAIN_ID = 226  # the bench's own ROS domain: never a robot's (0), the tests' (1–200) nor the other benches'
PHASES = {"baseline": (), "state": ("joint_states", "imu", "/clock"),
          "operator": ("teleop/arm_target", "joy", "cmd_vel", "teleop/squat_height", "teleop/heading",
                       "teleop/mode_request", "teleop/squat", "teleop/locomotion"),
          "retarget": ("xr/head", "xr/left_wrist", "xr/right_wrist"),
          "sim_bridge": ("joint_command",)}
SERVICES = ("teleop/squat", "teleop/locomotion")
BURST = 20  # messages per burst, at 1 kHz
# The logger of a node's log line, the node's name (rclpy's "[name]: "; a container's nodes share the runner's prefix)
_NODE = re.compile(r"\[([^\]\s]+)\]: ")
NEGATIVE_CLOCKS = 5


# -- strategies -----------------------------------------------------------------------------------------------
def _strategies(robot: Any) -> dict[str, Any]:
    """topic → a hypothesis strategy of message descriptions (plain tuples and dicts, made into messages when
    sent)."""
    from hypothesis import strategies as st

    names = list(robot.joint_names)
    arm_names = list(robot.group_names("arms"))
    extreme = st.sampled_from([0.0, -0.0, 1.8e308, -1.8e308, 1e300, -1e300, 1e-300, math.inf, -math.inf, math.nan])
    anyfloat = st.floats(allow_nan=True, allow_infinity=True) | extreme
    float32 = st.floats(allow_nan=True, allow_infinity=True, width=32)
    stamp = st.sampled_from(["now", "now", "now", "zero", "past", "future"]) | st.tuples(
        st.integers(-2**31, 2**31 - 1), st.integers(0, 2**32 - 1))

    def name_lists(base: list[str]) -> Any:
        unknown = st.sampled_from(["tail_joint", "", "left_elbow", "LEFT_ELBOW_JOINT", "joint_0"])
        return st.one_of(
            st.just(base), st.just(base), st.permutations(base), st.just(base[:-1]), st.just([*base, base[0]]),
            st.lists(st.sampled_from(base) | unknown, max_size=len(base) + 3))

    @st.composite
    def values(draw: Any, n: int, center: np.ndarray | None, spread: float, huge: float) -> list[float]:
        """n values (sometimes not n): a plausible spoof around ``center``, huge ones or any magnitude, filled by
        a generator hypothesis seeds, and up to 3 of them set to values hypothesis picks (its edge cases)."""
        length = draw(st.sampled_from([n] * 6 + [0, max(n - 1, 0), n + 1]))
        kind = draw(st.sampled_from(["spoof", "huge", "any"]))
        rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
        if kind == "spoof" and center is not None:
            out = np.resize(center, length) + rng.uniform(-spread, spread, length)
        elif kind == "huge":
            out = rng.choice([huge, -huge, 1.8e308, -1.8e308], length)
        else:
            out = rng.standard_normal(length) * 10.0 ** rng.uniform(-3, 300, length)
        result = out.tolist()
        if length:
            for i, value in draw(st.lists(st.tuples(st.integers(0, length - 1), anyfloat), max_size=3)):
                result[i] = value
        return result

    @st.composite
    def joint_state(draw: Any, base: list[str], center: np.ndarray, effort: float) -> dict[str, Any]:
        joints = draw(name_lists(base))
        n = len(joints)
        centre = center if len(joints) == len(base) else None
        return {"stamp": draw(stamp), "name": joints, "position": draw(values(n, centre, 0.5, 1e3)),
                "velocity": draw(values(n, np.zeros(n), 3.0, 1e4)), "effort": draw(values(n, np.zeros(n), effort, 1e3))}

    quaternion = st.one_of(st.tuples(anyfloat, anyfloat, anyfloat, anyfloat), st.just((0.0, 0.0, 0.0, 0.0)),
                           st.tuples(st.floats(-1, 1), st.floats(-1, 1), st.floats(-1, 1), st.floats(-1, 1)),
                           st.just((1.0, 0.0, 0.0, 0.0)))
    vector3 = st.tuples(anyfloat, anyfloat, anyfloat) | st.tuples(st.floats(-5, 5), st.floats(-5, 5), st.floats(-5, 5))
    pose = st.fixed_dictionaries({"stamp": stamp, "position": vector3, "orientation": quaternion})
    arm_center = robot.default_q[robot.group("arms")]
    return {
        "joint_states": joint_state(names, robot.default_q, 30.0),
        "imu": st.fixed_dictionaries({"stamp": stamp, "orientation": quaternion, "gyro": vector3, "accel": vector3}),
        "teleop/arm_target": joint_state(arm_names, arm_center, 200.0),
        "joy": st.fixed_dictionaries({"stamp": stamp, "axes": st.lists(float32, max_size=10),
                                      "buttons": st.lists(st.integers(-2**31, 2**31 - 1) | st.integers(0, 1),
                                                          max_size=12)}),
        "cmd_vel": st.tuples(anyfloat, anyfloat, anyfloat, anyfloat, anyfloat, anyfloat),
        "teleop/squat_height": float32 | st.floats(0.3, 0.9), "teleop/heading": float32 | st.floats(-7.0, 7.0),
        "teleop/mode_request": st.sampled_from(["SQUAT", "LOCOMOTION", "squat", " locomotion ", "STAND_HOLD", ""])
        | st.text(max_size=300),
        "/clock": st.tuples(st.integers(-2**31, 2**31 - 1), st.integers(0, 2**32 - 1))
        | st.tuples(st.integers(-5, 5), st.integers(0, 10**9 - 1)),
        "teleop/squat": st.just(None),
        "teleop/locomotion": st.just(None),
        "xr/head": pose, "xr/left_wrist": pose, "xr/right_wrist": pose,
        "joint_command": joint_state(names, robot.default_q, 30.0),
    }


SPECIAL = (0.0, -0.0, 1.8e308, -1.8e308, 1e300, -1e300, math.inf, -math.inf, math.nan)


def _mutate(description: Any, rng: np.random.Generator) -> Any:
    """A copy of a drawn description with a few of its numbers changed (special values, or scaled)."""
    if isinstance(description, float):
        roll = rng.random()
        if roll < 0.1:
            return float(SPECIAL[rng.integers(len(SPECIAL))])
        return description * float(rng.choice([1.0, -1.0, 10.0, 1e-3])) if roll < 0.3 else description
    if isinstance(description, list) and description and all(isinstance(v, float) for v in description):
        out = list(description)
        for i in rng.integers(0, len(out), size=int(rng.integers(0, 3))):
            out[i] = _mutate(out[i], rng)
        return out
    if isinstance(description, dict):
        return {k: (v if k == "name" else _mutate(v, rng)) for k, v in description.items()}
    if isinstance(description, tuple) and all(isinstance(v, float) for v in description):
        return tuple(_mutate(v, rng) for v in description)
    return description


def _collector(drawn: list[Any]) -> Callable[[Any], None]:
    def collect(description: Any) -> None:
        drawn.append(description)

    return collect


def generate(robot: Any, topics: tuple[str, ...], count: int, seed: int, templates: int = 300) -> dict[str, list[Any]]:
    """``count`` message descriptions per topic (the same for the same ``seed``): up to ``templates`` drawn by
    hypothesis (its engine steers them to edge cases: lengths, names, special values, stamps), the rest copies
    of those with a few numbers changed by a seeded generator (hypothesis draws a few hundred messages a second;
    a 10⁴-message run would wait minutes for it)."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hypothesis_seed

    strategies = _strategies(robot)
    rng = np.random.default_rng(seed)
    out: dict[str, list[Any]] = {}
    for k, topic in enumerate(topics):
        drawn: list[Any] = []
        collect = given(strategies[topic])(_collector(drawn))
        collect = settings(max_examples=min(count, templates), database=None, phases=[Phase.generate], deadline=None,
                           suppress_health_check=list(HealthCheck))(collect)
        hypothesis_seed(seed + k)(collect)()
        out[topic] = drawn + [_mutate(drawn[i % len(drawn)], rng) for i in range(count - len(drawn))]
    return out


# -- messages ---------------------------------------------------------------------------------------------------
def _stamp(spec: Any, now_ns: int) -> Any:
    from builtin_interfaces.msg import Time

    ns = {"now": now_ns, "zero": 0, "past": now_ns - 3_600 * 10**9, "future": now_ns + 3_600 * 10**9}.get(spec)
    if ns is None:
        return Time(sec=spec[0], nanosec=spec[1])
    ns = max(ns, 0)
    return Time(sec=min(ns // 10**9, 2**31 - 1), nanosec=ns % 10**9)


def make_message(topic: str, d: Any, now_ns: int) -> Any:
    """The ROS message of a description (``now_ns``: the simulation's time, for stamps "now")."""
    from geometry_msgs.msg import PoseStamped, Twist
    from rosgraph_msgs.msg import Clock
    from sensor_msgs.msg import Imu, JointState, Joy
    from std_msgs.msg import Float32, String

    if topic in ("joint_states", "teleop/arm_target", "joint_command"):
        msg = JointState(name=d["name"], position=d["position"], velocity=d["velocity"], effort=d["effort"])
    elif topic == "imu":
        msg = Imu()
        o, w, a = msg.orientation, msg.angular_velocity, msg.linear_acceleration
        o.w, o.x, o.y, o.z = d["orientation"]
        (w.x, w.y, w.z), (a.x, a.y, a.z) = d["gyro"], d["accel"]
    elif topic == "joy":
        msg = Joy(axes=d["axes"], buttons=d["buttons"])
    elif topic.startswith("xr/"):
        msg = PoseStamped()
        p, o = msg.pose.position, msg.pose.orientation
        (p.x, p.y, p.z), (o.w, o.x, o.y, o.z) = d["position"], d["orientation"]
    elif topic == "cmd_vel":
        msg = Twist()
        (msg.linear.x, msg.linear.y, msg.linear.z, msg.angular.x, msg.angular.y, msg.angular.z) = d
        return msg
    elif topic in ("teleop/squat_height", "teleop/heading"):
        return Float32(data=d)
    elif topic == "teleop/mode_request":
        return String(data=d)
    elif topic == "/clock":
        msg = Clock()
        msg.clock.sec, msg.clock.nanosec = d
        return msg
    else:
        raise ValueError(f"fuzz: no message for topic {topic!r}")
    msg.header.stamp, msg.header.frame_id = _stamp(d["stamp"], now_ns), FUZZ_FRAME
    return msg


# -- observation ------------------------------------------------------------------------------------------------
@dataclass
class Observations:
    """What the observers saw, with wall (monotonic) times."""

    commands: list[float] = field(default_factory=list)  # arrival times of the policy's joint_command
    violations: list[str] = field(default_factory=list)
    arm_targets: list[float] = field(default_factory=list)
    arm_target_problems: list[str] = field(default_factory=list)
    states: list[float] = field(default_factory=list)  # the simulator's joint_states
    state_problems: list[str] = field(default_factory=list)
    modes: list[tuple[float, str]] = field(default_factory=list)
    off_stamps: Counter = field(default_factory=Counter)  # topic → the graph's messages stamped > 1 s off sim time
    pelvis_z: list[tuple[float, float]] = field(default_factory=list)
    sim_times: list[tuple[float, int]] = field(default_factory=list)  # (arrival, odom stamp ns)
    sim_ns: int = 0
    diagnostics: dict[str, dict[str, str]] = field(default_factory=dict)  # node → its latest status values


def command_violations(msg: Any, robot: Any) -> list[str]:
    """Why a joint_command breaks the robot's limits (empty: it does not)."""
    names = list(robot.joint_names)
    if list(msg.name) != names:
        return [f"names {list(msg.name)[:3]}… are not the robot's 29 joints in order"]
    q, dq, tau = (np.asarray(v, dtype=float) for v in (msg.position, msg.velocity, msg.effort))
    problems = []
    for label, values, low, high in (("position", q, robot.q_lower, robot.q_upper),
                                     ("velocity", dq, -robot.velocity_limit, robot.velocity_limit),
                                     ("effort", tau, -robot.effort_limit, robot.effort_limit)):
        if len(values) != len(names):
            problems.append(f"{label}: {len(values)} values")
        elif not np.all(np.isfinite(values)):
            problems.append(f"{label}: non-finite {names[int(np.flatnonzero(~np.isfinite(values))[0])]}")
        elif np.any(values < low - 1e-9) or np.any(values > high + 1e-9):
            i = int(np.flatnonzero((values < low - 1e-9) | (values > high + 1e-9))[0])
            problems.append(f"{label}: {names[i]} {values[i]:.4g} outside [{low[i]:.4g}, {high[i]:.4g}]")
    return problems


def _observer(context: Any, robot: Any, seen: Observations, lock: threading.Lock) -> Any:
    import rclpy
    from diagnostic_msgs.msg import DiagnosticArray
    from geometry_msgs.msg import PoseStamped
    from nav_msgs.msg import Odometry
    from sensor_msgs.msg import JointState
    from std_msgs.msg import String

    from g1_teleop.ros.qos import QOS_LATCHED, QOS_OBSERVER, QOS_SENSOR

    node = rclpy.create_node("fuzz_observer", context=context)
    arm_index = robot.group("arms")

    def on_command(msg: JointState) -> None:
        if msg.header.frame_id == FUZZ_FRAME:
            return
        check_stamp("joint_command", msg.header.stamp)
        problems = command_violations(msg, robot)
        with lock:
            seen.commands.append(time.monotonic())
            seen.violations += problems

    def check_stamp(topic: str, stamp: Any) -> None:
        ns = stamp.sec * 10**9 + stamp.nanosec
        if seen.sim_ns and abs(ns - seen.sim_ns) > 10**9:
            seen.off_stamps[topic] += 1

    def on_arm_target(msg: JointState) -> None:
        if msg.header.frame_id == FUZZ_FRAME:
            return
        check_stamp("teleop/arm_target", msg.header.stamp)
        q = np.asarray(msg.position, dtype=float)
        problems = []
        if len(q) != len(arm_index) or not np.all(np.isfinite(q)):
            problems.append("arm target: wrong length or non-finite")
        elif np.any(q < robot.q_lower[arm_index] - 1e-6) or np.any(q > robot.q_upper[arm_index] + 1e-6):
            problems.append("arm target outside the joint limits")
        effort = np.asarray(msg.effort, dtype=float)
        if len(effort) == len(arm_index) and np.any(np.abs(effort) > robot.effort_limit[arm_index]):
            problems.append(f"arm feed-forward beyond the effort limits (max |τ| {np.nanmax(np.abs(effort)):.3g} N·m)")
        with lock:
            seen.arm_targets.append(time.monotonic())
            seen.arm_target_problems += problems

    def on_state(msg: JointState) -> None:
        if msg.header.frame_id == FUZZ_FRAME:
            return
        with lock:
            seen.states.append(time.monotonic())
            if not (np.all(np.isfinite(msg.position)) and np.all(np.isfinite(msg.velocity))):
                seen.state_problems.append("non-finite joint_states from the simulator")

    def on_odom(msg: Odometry) -> None:
        with lock:
            seen.sim_ns = msg.header.stamp.sec * 10**9 + msg.header.stamp.nanosec
            seen.sim_times.append((time.monotonic(), seen.sim_ns))
            seen.pelvis_z.append((time.monotonic(), msg.pose.pose.position.z))

    def on_diagnostics(msg: DiagnosticArray) -> None:
        with lock:
            for status in msg.status:
                seen.diagnostics[status.name.lstrip("/")] = {kv.key: kv.value for kv in status.values}

    node.create_subscription(DiagnosticArray, "diagnostics", on_diagnostics, 10)
    def on_pose(topic: str, msg: PoseStamped) -> None:
        if msg.header.frame_id != FUZZ_FRAME:
            with lock:
                check_stamp(topic, msg.header.stamp)

    for topic in ("xr/head", "xr/left_wrist", "xr/right_wrist"):
        node.create_subscription(PoseStamped, topic, lambda m, t=topic: on_pose(t, m), QOS_SENSOR)
    node.create_subscription(JointState, "joint_command", on_command, QOS_OBSERVER)
    node.create_subscription(JointState, "teleop/arm_target", on_arm_target, QOS_OBSERVER)
    node.create_subscription(JointState, "joint_states", on_state, QOS_OBSERVER)
    node.create_subscription(Odometry, "odom", on_odom, QOS_SENSOR)
    node.create_subscription(String, "teleop/mode", lambda m: seen.modes.append((time.monotonic(), m.data)),
                             QOS_LATCHED)
    return node


# -- the run ------------------------------------------------------------------------------------------------------
def _literal(text: str) -> Any:
    """A diagnostics value (str of a dict or number) back as the value, or the text."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def _rate_figures(prefix: str, times: list[float], start: float, end: float) -> dict[str, float]:
    """Messages per wall second over [start, end): mean and the lowest whole second."""
    t = np.asarray([x for x in times if start <= x < end])
    seconds = max(int(end - start), 1)
    bins = np.histogram(t, bins=seconds, range=(start, start + seconds))[0] if len(t) else np.zeros(seconds)
    return {f"{prefix}_rate_hz": round(len(t) / max(end - start, 1e-9), 2), f"{prefix}_rate_min_hz": float(bins.min())}


def _sim_figures(sim: list[tuple[float, int]], commands: int) -> dict[str, float]:
    """The simulation's real-time factor over a phase (simulated s per wall s, from odom) and the policy's
    commands per simulated second (50 when it keeps up with its clock, however fast the simulation runs)."""
    if len(sim) < 2 or sim[-1][1] <= sim[0][1]:
        return {"sim_realtime_factor": 0.0, "joint_command_per_sim_s": 0.0}
    sim_s = (sim[-1][1] - sim[0][1]) * 1e-9
    return {"sim_realtime_factor": round(sim_s / (sim[-1][0] - sim[0][0]), 3),
            "joint_command_per_sim_s": round(commands / sim_s, 2)}


def _log_figures(lines: list[tuple[float, str]], start: float, end: float) -> dict[str, float]:
    """Each node's log lines per wall second over [start, end): the most in any second."""
    counts: dict[str, Counter] = defaultdict(Counter)
    for t, line in lines:
        match = _NODE.search(line)
        if match and start <= t < end:
            counts[match.group(1)][int(t - start)] += 1
    return {f"log_lines_per_s_max_{name}": max(c.values()) for name, c in sorted(counts.items())}


def run_fuzz(messages_per_topic: int = 10_000, seed: int = 0, phases: tuple[str, ...] = tuple(PHASES),
             controller: str = "builtin", domain_id: int = FUZZ_DOMAIN_ID, min_phase_s: float = 10.0,
             templates: int = 300, on_line: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Fuzz each phase's topics with ``messages_per_topic`` messages each (every phase lasts at least
    ``min_phase_s``); the figures (flat, per phase ``{phase}_…``) and ``log`` (the graph's last lines)."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from std_srvs.srv import Trigger

    from g1_teleop.core.robot_description import load_robot
    from g1_teleop.launching.graph_description import load_graph
    from g1_teleop.launching.process_runner import GraphProcesses
    from g1_teleop.ros.qos import QOS_COMMAND, QOS_SENSOR, QOS_STATE
    from g1_teleop.tools.bench.figures import BenchError

    robot = load_robot()
    topics = tuple(dict.fromkeys(t for p in phases for t in PHASES[p]))
    t0 = time.monotonic()
    drawn = generate(robot, topics, messages_per_topic, seed, templates)
    figures: dict[str, Any] = {"messages_per_topic": messages_per_topic, "seed": seed,
                               "generate_s": round(time.monotonic() - t0, 1)}
    lines: list[tuple[float, str]] = []

    def output(line: str) -> None:
        lines.append((time.monotonic(), line))
        if on_line is not None:
            on_line(line)

    env = {"ROS_DOMAIN_ID": str(domain_id), "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}
    graph = GraphProcesses(load_graph("sim").resolve({"controller": controller, "lockstep": "false",
                                                      "gantry": "false"}), env=env, output=output)
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=domain_id)
    seen, lock = Observations(), threading.Lock()
    observer = _observer(context, robot, seen, lock)
    fuzzer = rclpy.create_node("fuzzer", context=context)
    qos = {"joint_states": QOS_STATE, "imu": QOS_STATE, "/clock": QOS_STATE, "joy": QOS_SENSOR,
           "cmd_vel": QOS_SENSOR, "xr/head": QOS_SENSOR, "xr/left_wrist": QOS_SENSOR, "xr/right_wrist": QOS_SENSOR}
    types = {t: type(make_message(t, drawn[t][0], 0)) for t in topics if t not in SERVICES}
    publishers = {t: fuzzer.create_publisher(types[t], t, qos.get(t, QOS_COMMAND)) for t in types}
    clients = {s: observer.create_client(Trigger, s) for s in SERVICES if s in topics}
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(observer)
    stop = threading.Event()

    def spin() -> None:
        while not stop.is_set():
            executor.spin_once(timeout_sec=0.05)

    spinner = threading.Thread(target=spin, daemon=True)
    try:
        graph.start()
        spinner.start()
        deadline = time.monotonic() + 90.0
        while len(seen.commands) < 100 or len(seen.arm_targets) < 50:  # the graph runs: commands and arm targets
            if (failure := graph.check()) is not None or time.monotonic() > deadline:
                raise BenchError(f"the graph did not start: {failure or 'no commands within 90 s'}:\n"
                                 + "\n".join(line for _, line in lines[-15:]))
            time.sleep(0.1)
        time.sleep(2.0)
        alive_before = set(graph.alive())
        for phase in phases:
            figures.update(_fuzz_phase(phase, drawn, publishers, clients, seen, lock, lines, robot, min_phase_s,
                                       graph, alive_before))
        figures["nodes_dead"] = sorted(alive_before - set(graph.alive()))
        figures["node_deaths"] = len(figures["nodes_dead"])
    finally:
        stop.set()
        spinner.join(timeout=2.0)
        codes = graph.stop()
        executor.shutdown()
        observer.destroy_node()
        fuzzer.destroy_node()
        context.try_shutdown()
    figures["exit_codes"] = codes
    figures["log"] = [line for _, line in lines[-40:]]
    return figures


def _fuzz_phase(phase: str, drawn: dict[str, list[Any]], publishers: dict[str, Any], clients: dict[str, Any],
                seen: Observations, lock: threading.Lock, lines: list[tuple[float, str]], robot: Any,
                min_phase_s: float, graph: Any, alive_before: set[str]) -> dict[str, Any]:
    """Send one phase's messages in 1 kHz bursts, round robin; its figures, named ``{phase}_…``."""
    from rosgraph_msgs.msg import Clock
    from std_srvs.srv import Trigger

    topics = PHASES[phase]
    count = len(drawn[topics[0]]) if topics else 0
    bursts = [(topic, k) for k in range(0, count, BURST) for topic in topics]
    gap_s = max(min_phase_s / max(len(bursts), 1) - BURST * 1e-3, 0.0)
    sent: Counter = Counter()
    with lock:
        n_commands, n_violations = len(seen.commands), len(seen.violations)
        n_arm, n_state = len(seen.arm_targets), len(seen.state_problems)
        modes_before = len(seen.modes)
        seen.off_stamps.clear()
    before = _rate_figures("arm_target", seen.arm_targets, time.monotonic() - 2.0, time.monotonic())
    start = time.monotonic()
    if "/clock" in topics:
        for _ in range(NEGATIVE_CLOCKS):
            clock = Clock()
            clock.clock.sec = -1
            publishers["/clock"].publish(clock)
            sent["/clock"] += 1
            time.sleep(0.01)
    futures = []
    if not bursts:
        time.sleep(min_phase_s)
    for topic, k in bursts:
        tick = time.monotonic()
        for i, description in enumerate(drawn[topic][k:k + BURST]):
            if topic in SERVICES:
                futures.append(clients[topic].call_async(Trigger.Request()))
            else:
                with contextlib.suppress(AssertionError, ValueError, TypeError):  # a value the type cannot carry
                    publishers[topic].publish(make_message(topic, description, seen.sim_ns))
            sent[topic] += 1
            time.sleep(max(0.0, tick + (i + 1) * 1e-3 - time.monotonic()))
        time.sleep(gap_s)
    end = time.monotonic()
    time.sleep(1.0)  # what the phase caused, still arriving
    with lock:
        commands = seen.commands[n_commands:]
        violations = seen.violations[n_violations:]
        arm_problems = Counter(seen.arm_target_problems[n_arm:])
        state_problems = len(seen.state_problems) - n_state
        modes = [m for _, m in seen.modes[modes_before:]]
        pelvis = [z for t, z in seen.pelvis_z if start <= t <= end + 1.0]
        sim = [(t, ns) for t, ns in seen.sim_times if start <= t < end]
        n_phase_commands = sum(start <= t < end for t in seen.commands)
        policy_status = dict(seen.diagnostics.get("policy", {}))
        off_stamps = dict(seen.off_stamps)
        seen.off_stamps.clear()
    logs = _log_figures(lines, start, end + 1.0)
    out: dict[str, Any] = {f"sent_{topic}": n for topic, n in sent.items()}
    out.update({"commands_checked": len(commands), "violations": len(violations),
                "violation_examples": violations[:5], "duration_s": round(end - start, 1),
                **_rate_figures("joint_command", seen.commands, start, end),
                **_sim_figures(sim, n_phase_commands),
                "arm_target_rate_before_hz": before["arm_target_rate_hz"],
                **_rate_figures("arm_target", seen.arm_targets, start, end),
                **_rate_figures("sim_joint_states", seen.states, start, end),
                "arm_target_problems": dict(arm_problems), "sim_state_problems": state_problems,
                "mode_switches": len(modes), "stamps_off_sim_time": off_stamps,
                "pelvis_min_z_m": round(min(pelvis), 3) if pelvis else None,
                "fell": bool(pelvis) and min(pelvis) < 0.3, **logs,
                "log_lines_per_s_max": max(logs.values(), default=0),
                "nodes_dead": sorted(alive_before - set(graph.alive())),
                "service_calls_answered": sum(f.done() for f in futures),
                "policy_refused": _literal(policy_status.get("refused_inputs", "{}")),
                "policy_refused_clock": _literal(policy_status.get("refused_clock", "{}")),
                "policy_skipped_ticks": _literal(policy_status.get("skipped_ticks", "0"))})
    if "/clock" in topics:
        refused = [_NODE.search(line) for t, line in lines
                   if "refused by rclpy's time source" in line and start <= t <= end + 1.0]
        out["nodes_that_refused_negative_clock"] = sorted({m.group(1) for m in refused if m})
    return {f"{phase}_{key}": value for key, value in out.items()}


def bench_fuzz() -> dict[str, Any]:
    """10⁴ fuzzed messages per topic (a baseline without, the policy's inputs, then retarget's, then the
    simulator's), seed 0."""
    figures = run_fuzz(messages_per_topic=10_000, seed=0)
    figures.pop("log")
    return figures
