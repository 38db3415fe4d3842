"""hw_bridge: a G1 (or the virtual robot) over Unitree's own DDS interface, behind the ROS topic contract.

Robot side (CycloneDDS through unitree_sdk2py, domain ``robot_domain_id`` on ``network_interface``):
rt/lowstate → the latest state (q, dq, pelvis quaternion, arrival time) and mode_machine, decoded from
the raw CDR bytes by :mod:`g1_teleop.lowstate` (CRC checked). rt/lowcmd is written by its own thread at
``lowcmd_rate_hz``: every tick hands the latest state, the latest valid joint_command and the queued
operator events to :class:`~g1_teleop.bridge_safety.BridgeSafety` and writes what it returns (nothing
when it returns None), packed with its CRC by :mod:`g1_teleop.lowcmd` and written as raw CDR bytes
(mode_pr 0, mode_machine echoed from the latest LowState).

ROS side: joint_command (29 named joints; a malformed message is rejected with one warning per kind of
problem) → BridgeSafety with the ``gain_profile`` gains. From the LowState stream (500 Hz), decimated on
average: joint_states (q, dq, tau_est) and imu at ``state_publish_rate_hz`` (200 Hz), joy at
``joy_publish_rate_hz`` (50 Hz: the wireless remote, axes lx, ly, rx, ry, L2, the 16 buttons in
``wireless_remote.BUTTONS`` order, frame_id "wireless_remote"). diagnostics at 1 Hz and on every
transition. Operator actions (start, activate, e-stop) come from the services hw_bridge/start,
hw_bridge/activate and hw_bridge/estop (std_srvs/Trigger: the response says what happened or why it was
refused), from wireless-remote combinations (on the press) and, when ``joy_*_button`` are set, from the
buttons of a Joy device on ``joy`` (messages with frame_id "wireless_remote" are this node's own).

Threads: the executor (ROS callbacks, logging, diagnostics), CycloneDDS's listener (LowState → latest
sample, remote combinations, joint_states, imu, joy) and the LowCmd loop. They share immutable samples
by reference and a queue of operator requests; the loop hands what happened to the executor through a
guard condition and publishes nothing itself. With ``dex3``, the Dex3 hands go through
:mod:`g1_teleop.nodes.hand_bridge` (teleop/hand_target → rt/dex3/*/cmd, rt/dex3/*/state → hand_states),
following the body's safety state. Shutdown: the loop writes damping for 50 ms and
stops, then the robot's DDS closes, then rclpy.
"""

from __future__ import annotations

import collections
import contextlib
import os
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import rclpy.logging
from diagnostic_msgs.msg import DiagnosticStatus
from rclpy.node import Node
from sensor_msgs.msg import Imu, JointState, Joy
from std_srvs.srv import Trigger

from g1_teleop.bridge_safety import (
    BridgeSafety,
    BridgeSafetyConfig,
    CommandSample,
    OperatorAction,
    OperatorEvent,
    SafetyOutput,
    SafetyState,
    StateSample,
)
from g1_teleop.dex3 import Dex3ConfigError, load_dex3
from g1_teleop.joint_vector import JointIndex, MalformedJointMessage
from g1_teleop.limits import JointCommand
from g1_teleop.lowcmd import MODE_PR, NUM_BODY_JOINTS, lowcmd_to_cdr, motor_slots, pack_lowcmd
from g1_teleop.lowstate import lowstate_crc, lowstate_from_cdr, unpack_lowstate
from g1_teleop.nodes.common import (
    QOS_COMMAND,
    QOS_SENSOR,
    QOS_STATE,
    ConfigError,
    Diagnostics,
    WarnOnce,
    declare_config,
    run,
)
from g1_teleop.nodes.hand_bridge import HandBridge
from g1_teleop.robot import load_robot
from g1_teleop.wireless_remote import WirelessRemote, combo_pressed, parse_combo, parse_wireless_remote

REMOTE_FRAME = "wireless_remote"  # frame_id of the joy messages this node publishes
SHUTDOWN_DAMP_S = 0.05  # on shutdown, write damping this long before the loop stops
COUNTERS = ("lowstate_received", "lowstate_dropped", "lowcmd_written", "lowcmd_write_errors", "commands_received",
            "commands_rejected", "operator_events")  # on diagnostics
GIL_SWITCH_INTERVAL_S = 0.0005  # so the LowCmd loop waits at most this long for a busy thread (default 5 ms)


@dataclass(frozen=True)
class HwBridgeConfig:
    model: str = ""  # URDF or MJCF path; empty: the project's model
    robot_config: str = ""  # robot YAML; empty: config/g1_29dof.yaml
    robot_domain_id: int = 0  # the robot's DDS domain (CycloneDDS)
    network_interface: str = "eth0"  # wired to the robot; lo for the virtual robot
    lowcmd_rate_hz: float = 500.0
    lowcmd_priority: int = 0  # SCHED_FIFO priority (1–99) of the LowCmd thread; 0: normal scheduling
    state_publish_rate_hz: float = 200.0  # joint_states and imu (average; at most one per LowState)
    joy_publish_rate_hz: float = 50.0  # joy: the wireless remote (average; at most one per LowState)
    gain_profile: str = "default"  # gains of the policy's commands in ACTIVE
    start_combo: str = "start"  # wireless-remote combinations ("L1+B"), acting on the press
    activate_combo: str = "A"
    estop_combo: str = "select"
    joy_start_button: int = -1  # Joy device button indices; -1: not used
    joy_activate_button: int = -1
    joy_estop_button: int = -1
    lowstate_crc_check: bool = True  # drop LowState samples whose CRC does not match
    dex3: bool = False  # drive two Dex3 hands (rt/dex3/{left,right}/cmd|state)
    dex3_config: str = ""  # hand YAML; empty: config/dex3.yaml
    dex3_rate_hz: float = 100.0  # HandCmd per hand (average)

    def __post_init__(self) -> None:
        if not 0 <= self.robot_domain_id <= 232:
            raise ValueError(f"robot_domain_id = {self.robot_domain_id}: must be a DDS domain id in [0, 232]")
        if not self.network_interface:
            raise ValueError("network_interface is empty: name the interface wired to the robot (lo: virtual robot)")
        for name in ("lowcmd_rate_hz", "state_publish_rate_hz", "joy_publish_rate_hz", "dex3_rate_hz"):
            if not 0 < getattr(self, name) <= 2000:
                raise ValueError(f"{name} = {getattr(self, name)}: must be in (0, 2000] Hz")
        if not 0 <= self.lowcmd_priority <= 99:
            raise ValueError(f"lowcmd_priority = {self.lowcmd_priority}: a SCHED_FIFO priority 1–99, or 0 for none")
        for name in ("start_combo", "activate_combo", "estop_combo"):
            try:
                parse_combo(getattr(self, name))
            except ValueError as exc:
                raise ValueError(f"{name}: {exc}") from None
        for name in ("joy_start_button", "joy_activate_button", "joy_estop_button"):
            if getattr(self, name) < -1:
                raise ValueError(f"{name} = {getattr(self, name)}: a button index, or -1 for none")

    def combos(self) -> dict[OperatorAction, frozenset[str]]:
        return {OperatorAction.START: parse_combo(self.start_combo),
                OperatorAction.ACTIVATE: parse_combo(self.activate_combo),
                OperatorAction.ESTOP: parse_combo(self.estop_combo)}

    def joy_buttons(self) -> dict[OperatorAction, int]:
        buttons = {OperatorAction.START: self.joy_start_button, OperatorAction.ACTIVATE: self.joy_activate_button,
                   OperatorAction.ESTOP: self.joy_estop_button}
        return {action: index for action, index in buttons.items() if index >= 0}


@dataclass
class _Request:
    """An operator event on its way to the LowCmd loop; a service waits on ``done`` for the answer."""

    event: OperatorEvent
    done: threading.Event | None = None
    success: bool = False
    message: str = ""

    def answer(self, output: SafetyOutput, state: SafetyState) -> None:
        refused = f"{self.event.action.value} from {self.event.source} refused: "
        refusal = next((n for n in output.notices if n.startswith(refused)), None)
        if refusal is not None:
            self.success, self.message = False, refusal
        elif output.transitions:
            self.success, self.message = True, "; ".join(str(t) for t in output.transitions)
        else:
            self.success, self.message = True, f"already {state.value}"
        if self.done is not None:
            self.done.set()


@dataclass
class _LoopStats:
    """What the LowCmd loop measured since the executor last collected it (s)."""

    periods: list[float] = field(default_factory=list)  # between tick starts
    busy: list[float] = field(default_factory=list)  # wall time of each tick
    thread_cpu_s: float = 0.0


class HwBridge(Node):
    def __init__(self) -> None:
        super().__init__("hw_bridge")
        self._loop: threading.Thread | None = None  # set once the robot's DDS is open
        self._loop_failure: Exception | None = None
        self._dds: _RobotDds | None = None
        self.hands: HandBridge | None = None
        cfg = self.cfg = declare_config(self, HwBridgeConfig)
        safety_cfg = declare_config(self, BridgeSafetyConfig)
        robot = load_robot(cfg.robot_config or None, cfg.model or None)
        if len(robot.joint_names) != NUM_BODY_JOINTS:
            raise ConfigError(f"hw_bridge drives the {NUM_BODY_JOINTS}-joint G1; the model has "
                              f"{len(robot.joint_names)} joints")
        try:
            self.safety = BridgeSafety(robot, safety_cfg)
            self.kp, self.kd = robot.gains(cfg.gain_profile)
        except KeyError as exc:  # an unknown gain profile
            raise ConfigError(f"invalid parameters for hw_bridge: {exc.args[0]}") from None
        self.joint_names = list(robot.joint_names)
        self.index = JointIndex(robot.joint_names)
        self.combos = cfg.combos()
        self.joy_buttons = cfg.joy_buttons()
        self.warn = WarnOnce(self)

        # Shared between threads: samples are replaced whole, never mutated.
        self._state: StateSample | None = None
        self._mode_machine = 0
        self._command: CommandSample | None = None
        self._requests: collections.deque[_Request] = collections.deque()
        self._reports: collections.deque[SafetyOutput] = collections.deque()
        self._stats = _LoopStats()
        self.counts = collections.Counter[str]()
        self._previous_remote: WirelessRemote | None = None
        self._joy_held: dict[OperatorAction, bool] = {}
        self._state_due = _Decimator(cfg.state_publish_rate_hz)
        self._joy_due = _Decimator(cfg.joy_publish_rate_hz)

        self.pub_joints = self.create_publisher(JointState, "joint_states", QOS_STATE)
        self.pub_imu = self.create_publisher(Imu, "imu", QOS_STATE)
        self.pub_joy = self.create_publisher(Joy, "joy", QOS_SENSOR)
        self.create_subscription(JointState, "joint_command", self.on_command, QOS_COMMAND)
        if self.joy_buttons:  # (it also hears this node's own joy: a cost worth paying only when used)
            self.create_subscription(Joy, "joy", self.on_joy, QOS_SENSOR)
        for action in OperatorAction:
            self.create_service(Trigger, f"hw_bridge/{action.value}",
                                lambda request, response, a=action: self.on_service(a, response))
        self._report_guard = self.create_guard_condition(self.handle_reports)
        self._cpu_mark = (time.monotonic(), time.process_time())
        self._loop_figures: dict[str, object] = {}
        self._command_gap_max_s = 0.0  # longest wait between valid joint_commands, per diagnostics window
        self.diagnostics = Diagnostics(self, self.diagnostic_values)
        self.report(SafetyState.WAIT_FOR_STATE, "waiting for rt/lowstate")

        self._dds = _RobotDds(cfg.robot_domain_id, cfg.network_interface, self.on_lowstate)
        if cfg.dex3:
            try:
                dex3 = load_dex3(Path(cfg.dex3_config) if cfg.dex3_config else None)
            except Dex3ConfigError as exc:
                raise ConfigError(str(exc)) from None
            self.hands = HandBridge(self, self._dds.participant, dex3, cfg.dex3_rate_hz, self.warn)
        sys.setswitchinterval(GIL_SWITCH_INTERVAL_S)
        self._stop = threading.Event()
        self._loop = threading.Thread(target=self.lowcmd_loop, name="lowcmd", daemon=True)
        self._loop.start()
        self.get_logger().info(
            f"robot DDS domain {cfg.robot_domain_id} on {cfg.network_interface}: waiting for rt/lowstate; "
            f"LowCmd at {cfg.lowcmd_rate_hz:g} Hz; operator: remote {cfg.start_combo} / {cfg.activate_combo} / "
            f"{cfg.estop_combo} (start / activate / e-stop), services hw_bridge/start|activate|estop"
            + (f"; Dex3 hands at {cfg.dex3_rate_hz:g} Hz" if self.hands else "")
        )

    # -- LowCmd loop (its own thread) --------------------------------------------------------------
    def lowcmd_loop(self) -> None:
        try:
            self._run_lowcmd_loop()
        except Exception as exc:  # a bug: damp once if DDS still works, then let the executor raise it
            with contextlib.suppress(Exception):
                damping = JointCommand.damping(NUM_BODY_JOINTS, self.safety.damping_kd)
                self._dds.write(lowcmd_to_cdr(pack_lowcmd(MODE_PR, self._mode_machine, **motor_slots(damping))[0]))
            self._loop_failure = exc
            self._report_guard.trigger()

    def _run_lowcmd_loop(self) -> None:
        if self.cfg.lowcmd_priority:
            try:  # pid 0: this thread
                os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(self.cfg.lowcmd_priority))
            except OSError as exc:
                self.get_logger().warning(f"LowCmd thread keeps normal scheduling: SCHED_FIFO "
                                          f"{self.cfg.lowcmd_priority} refused ({exc}; needs CAP_SYS_NICE)")
        period = 1.0 / self.cfg.lowcmd_rate_hz
        next_tick = time.monotonic()
        last_start: float | None = None
        damp_until: float | None = None
        while damp_until is None or time.monotonic() < damp_until:
            if damp_until is None and self._stop.is_set():
                self._requests.append(_Request(OperatorEvent(OperatorAction.ESTOP, "bridge shutdown")))
                damp_until = time.monotonic() + SHUTDOWN_DAMP_S
            next_tick += period
            delay = next_tick - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            elif delay < -period:  # more than a tick behind: skip ahead instead of bursting
                next_tick = time.monotonic()
            start, cpu = time.monotonic(), time.thread_time()
            self.tick(start)
            stats = self._stats
            if last_start is not None:
                stats.periods.append(start - last_start)
            stats.busy.append(time.monotonic() - start)
            stats.thread_cpu_s += time.thread_time() - cpu
            last_start = start

    def tick(self, now: float) -> None:
        requests = []
        while self._requests:
            requests.append(self._requests.popleft())
        output = self.safety.step(now, self._state, self._command, [r.event for r in requests])
        for request in requests:
            request.answer(output, self.safety.state)
        if output.command is not None:
            packed, _ = pack_lowcmd(MODE_PR, self._mode_machine, **motor_slots(output.command))
            if self._dds.write(lowcmd_to_cdr(packed)) < 0:
                self.counts["lowcmd_write_errors"] += 1
            else:
                self.counts["lowcmd_written"] += 1
        if self.hands is not None:
            self.hands.tick(now, self.safety.state)
        if output.transitions or output.notices:
            self._reports.append(output)
            if self.context.ok():  # after a signal only the shutdown damping is left to run
                self._report_guard.trigger()

    # -- what the loop reports (executor thread) ---------------------------------------------------
    def handle_reports(self) -> None:
        if self._loop_failure is not None:
            raise RuntimeError("the LowCmd loop failed (one damping LowCmd was attempted)") from self._loop_failure
        logger = self.get_logger()
        while self._reports:
            output = self._reports.popleft()
            for transition in output.transitions:
                if transition.current is SafetyState.DAMP:
                    logger.warning(f"safety: {transition}")
                else:
                    logger.info(f"safety: {transition}")
                self.report(transition.current, str(transition))
            for notice in output.notices:
                if notice.startswith("joint_command rejected"):
                    self.warn("bridge_rejected", notice)
                elif notice.startswith("LowCmd writing stopped"):
                    logger.error(notice)
                    self.report(self.safety.state, notice, DiagnosticStatus.ERROR)
                elif notice.startswith("LowCmd writing resumed"):
                    logger.info(notice)
                    self.report(self.safety.state, notice)
                else:
                    logger.warning(notice)

    def report(self, state: SafetyState, reason: str, level: int | None = None) -> None:
        """Publish the state and why on diagnostics (WARN in DAMP unless ``level`` says otherwise)."""
        if level is None:
            level = DiagnosticStatus.WARN if state is SafetyState.DAMP else DiagnosticStatus.OK
        self.diagnostics.set(level, f"{state.value}: {reason}")

    def diagnostic_values(self) -> dict[str, object]:
        """State, counters and the LowCmd loop's figures (over the last second or so)."""
        state = self._state
        now, cpu = time.monotonic(), time.process_time()
        wall = now - self._cpu_mark[0]
        stats = self._stats
        if wall >= 0.5 and stats.periods:  # a transition's extra publication keeps the previous figures
            self._stats = _LoopStats()
            periods_ms, busy_us = np.array(stats.periods) * 1e3, np.array(stats.busy) * 1e6
            self._loop_figures = {
                "lowcmd_period_p50_ms": round(float(np.percentile(periods_ms, 50)), 3),
                "lowcmd_period_p99_ms": round(float(np.percentile(periods_ms, 99)), 3),
                "lowcmd_period_max_ms": round(float(periods_ms.max()), 3),
                "lowcmd_tick_p50_us": round(float(np.percentile(busy_us, 50)), 1),
                "lowcmd_tick_p99_us": round(float(np.percentile(busy_us, 99)), 1),
                "lowcmd_loop_cpu_percent": round(100 * stats.thread_cpu_s / wall, 2),
                "process_cpu_percent": round(100 * (cpu - self._cpu_mark[1]) / wall, 1),
                "joint_command_gap_max_ms": round(self._command_gap_max_s * 1e3, 1),
            }
            self._command_gap_max_s = 0.0
            self._cpu_mark = (now, cpu)
        return {
            "state": self.safety.state.value,
            "lowstate_age_ms": "none" if state is None else round((now - state.received_s) * 1e3, 1),
            "mode_machine": self._mode_machine,
            **{name: self.counts[name] for name in COUNTERS},
            **(dict(self.hands.counts) if self.hands else {}),
            **self._loop_figures,
        }

    # -- robot state (CycloneDDS listener thread) --------------------------------------------------
    def on_lowstate(self, sample: bytes, received_s: float) -> None:
        """One rt/lowstate sample (CDR bytes) and when it arrived (time.monotonic)."""
        try:
            packed = lowstate_from_cdr(sample)
        except ValueError as exc:
            self.counts["lowstate_dropped"] += 1
            self.warn("lowstate_encoding", f"dropped rt/lowstate: {exc}")
            return
        msg = unpack_lowstate(packed)
        if self.cfg.lowstate_crc_check and lowstate_crc(packed) != int(msg["crc"]):
            self.counts["lowstate_dropped"] += 1
            self.warn("lowstate_crc", "dropped rt/lowstate: its CRC does not match (if every sample fails, the "
                                      "robot does not fill it: lowstate_crc_check:=false)")
            return
        motors = msg["motor_state"][:NUM_BODY_JOINTS]
        q, dq = motors["q"].astype(float), motors["dq"].astype(float)
        imu = msg["imu_state"]
        self._mode_machine = int(msg["mode_machine"])
        self._state = StateSample(received_s, q, dq, imu["quaternion"].astype(float))
        self.counts["lowstate_received"] += 1
        try:
            remote = parse_wireless_remote(msg["wireless_remote"].tobytes())
        except ValueError as exc:
            self.warn("remote", f"ignored a wireless remote reading: {exc}")
            remote = None
        if remote is not None:
            for action, combo in self.combos.items():
                if combo_pressed(self._previous_remote, remote, combo):
                    self.request(OperatorEvent(action, "wireless remote"))
            self._previous_remote = remote
        try:
            if self._state_due(received_s):
                self.publish_state(q, dq, motors["tau_est"].astype(float), imu)
            if remote is not None and self._joy_due(received_s):
                self.publish_remote(remote)
        except Exception:
            if self.context.ok():
                raise
            # A signal shut ROS down while this DDS thread was publishing; DDS closes right after.

    def publish_state(self, q: np.ndarray, dq: np.ndarray, tau: np.ndarray, imu: np.ndarray) -> None:
        stamp = self.get_clock().now().to_msg()
        joints = JointState(name=self.joint_names, position=q.tolist(), velocity=dq.tolist(), effort=tau.tolist())
        joints.header.stamp = stamp
        self.pub_joints.publish(joints)
        self.pub_imu.publish(imu_msg(imu, stamp))

    def publish_remote(self, remote: WirelessRemote) -> None:
        joy = Joy(axes=list(remote.axes), buttons=[int(b) for b in remote.buttons])
        joy.header.stamp, joy.header.frame_id = self.get_clock().now().to_msg(), REMOTE_FRAME
        self.pub_joy.publish(joy)

    # -- operator and policy (executor thread) -----------------------------------------------------
    def request(self, event: OperatorEvent, done: threading.Event | None = None) -> _Request:
        self.counts["operator_events"] += 1
        request = _Request(event, done)
        self._requests.append(request)
        return request

    def on_service(self, action: OperatorAction, response: Trigger.Response) -> Trigger.Response:
        request = self.request(OperatorEvent(action, "service"), threading.Event())
        assert request.done is not None
        if request.done.wait(timeout=0.5):
            response.success, response.message = request.success, request.message
        else:
            response.success, response.message = False, "the LowCmd loop did not answer within 0.5 s"
        return response

    def on_joy(self, msg: Joy) -> None:
        if msg.header.frame_id == REMOTE_FRAME:
            return
        for action, index in self.joy_buttons.items():
            if index >= len(msg.buttons):
                self.warn("joy_buttons", f"joy has {len(msg.buttons)} buttons; joy_{action.value}_button = "
                                         f"{index} is not one of them")
                continue
            held = msg.buttons[index] != 0
            if held and not self._joy_held.get(action, False):
                self.request(OperatorEvent(action, f"joy button {index}"))
            self._joy_held[action] = held

    def on_command(self, msg: JointState) -> None:
        received_s = time.monotonic()
        try:
            vec = self.index.parse(msg.name, msg.position, msg.velocity, msg.effort)
        except MalformedJointMessage as exc:
            self.counts["commands_rejected"] += 1
            self.warn(exc.kind, f"rejected joint_command: {exc}; it does not reach the robot")
            return
        zeros = np.zeros(len(self.index))
        command = JointCommand(q=vec.position, dq=zeros if vec.velocity is None else vec.velocity,
                               tau_ff=zeros if vec.effort is None else vec.effort, kp=self.kp, kd=self.kd)
        if self._command is not None:
            self._command_gap_max_s = max(self._command_gap_max_s, received_s - self._command.received_s)
        self._command = CommandSample(received_s, command)
        self.counts["commands_received"] += 1

    # -- shutdown ----------------------------------------------------------------------------------
    def destroy_node(self) -> None:
        """Damp and stop the LowCmd loop, close the robot's DDS, then the ROS side."""
        if self._loop is not None and self._loop.is_alive():
            self._stop.set()
            self._loop.join(timeout=1.0)
        if self.hands is not None:
            self.hands.close()
        if self._dds is not None:
            self._dds.close()
            self._dds = None
        logger = rclpy.logging.get_logger(f"{self.get_name()}.shutdown")  # ROS may be down: console only
        while self._reports:  # the shutdown damping: the executor no longer runs
            for transition in self._reports.popleft().transitions:
                logger.warning(f"safety: {transition}")
        super().destroy_node()


class _Decimator:
    """True for the samples (times in s) that keep a stream at ``rate_hz`` on average."""

    def __init__(self, rate_hz: float) -> None:
        self.period = 1.0 / rate_hz
        self.next_s = 0.0

    def __call__(self, t: float) -> bool:
        if t < self.next_s:
            return False
        self.next_s = max(self.next_s + self.period, t - self.period)
        return True


def imu_msg(imu: np.ndarray, stamp) -> Imu:
    """sensor_msgs/Imu of a LowState ``imu_state`` record: quaternion (w, x, y, z) world ← pelvis,
    gyroscope (rad/s), accelerometer (m/s²), both in the IMU frame on the pelvis."""
    msg = Imu()
    msg.header.stamp, msg.header.frame_id = stamp, "imu_in_pelvis"
    o = msg.orientation
    o.w, o.x, o.y, o.z = imu["quaternion"].tolist()
    w, a = msg.angular_velocity, msg.linear_acceleration
    w.x, w.y, w.z = imu["gyroscope"].tolist()
    a.x, a.y, a.z = imu["accelerometer"].tolist()
    return msg


class _RobotDds:
    """rt/lowstate in and rt/lowcmd out as raw CDR bytes (the SDK's Python (de)serialiser costs ~0.4 ms a
    LowState), on the robot's CycloneDDS domain. ``on_lowstate(sample, received_s)`` gets the newest
    sample of each delivery, in CycloneDDS's listener thread."""

    def __init__(self, domain_id: int, interface: str, on_lowstate) -> None:
        try:
            from cyclonedds._clayer import ddspy_take, ddspy_write
            from cyclonedds.core import Listener
            from cyclonedds.domain import DomainParticipant
            from cyclonedds.pub import DataWriter
            from cyclonedds.sub import DataReader
            from cyclonedds.topic import Topic
            from unitree_sdk2py.core.channel import ChannelFactoryInitialize
            from unitree_sdk2py.idl.unitree_hg.msg.dds_ import LowCmd_, LowState_
        except ImportError as exc:
            raise ConfigError(f"hw_bridge needs unitree_sdk2py (scripts/install_robot_sdk.sh installs it): {exc}") \
                from None
        self._take, self._write = ddspy_take, ddspy_write
        self._on_lowstate = on_lowstate
        # The SDK's process-wide channel factory holds the domain's configuration (the interface); this
        # participant shares that domain.
        try:
            ChannelFactoryInitialize(domain_id, interface)
        except Exception as exc:  # the SDK raises a bare Exception (and prints CycloneDDS's reason)
            raise ConfigError(f"cannot open the robot's DDS domain {domain_id} on interface {interface!r}: {exc}") \
                from None
        self._participant = DomainParticipant(domain_id)
        self._writer = DataWriter(self._participant, Topic(self._participant, "rt/lowcmd", LowCmd_))
        self._reader = DataReader(self._participant, Topic(self._participant, "rt/lowstate", LowState_),
                                  listener=Listener(on_data_available=self._on_data))

    def _on_data(self, reader) -> None:
        received_s = time.monotonic()
        samples = self._take(reader._ref, 8)
        if isinstance(samples, int):  # a DDS error code
            return
        latest = next((data for data, info in reversed(samples) if info.valid_data), None)
        if latest is not None:
            self._on_lowstate(latest, received_s)

    @property
    def participant(self):
        """The CycloneDDS participant on the robot's domain (for the hands' endpoints)."""
        return self._participant

    def write(self, cdr: bytes) -> int:
        """Write one LowCmd sample; returns the DDS return code (negative: an error)."""
        return self._write(self._writer._ref, cdr)

    def close(self) -> None:
        """Stop listening, then delete the endpoints and the participant."""
        self._reader.set_listener(None)
        del self._reader, self._writer, self._participant


# rclpy publishes with the GIL held, and Fast DDS's shared-memory transport can block a publish for about a
# second when a subscriber process has died (measured here: a SIGKILLed reliable subscriber on a loaded
# 2-core machine blocked publish for 1006 ms, stalling every Python thread of the publisher). In this node
# that would stop the LowCmd loop, damping included. Its ROS participant therefore sends over UDP only (no
# shared memory; with it the same test's worst publish was 9 ms), unless the user chose the transports.
# Fast DDS ≥ 2.13 (Jazzy, Kilted) reads this variable; on Humble use an XML profile (README).
ROS_TRANSPORTS_ENV = ("FASTDDS_BUILTIN_TRANSPORTS", "UDPv4")


def main(args: list[str] | None = None) -> None:
    os.environ.setdefault(*ROS_TRANSPORTS_ENV)
    run(HwBridge, args)


if __name__ == "__main__":
    main()
