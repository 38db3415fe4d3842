"""hw_bridge's LowCmd process: the robot side of the bridge, in a process of its own. ROS-free.

It opens the robot's DDS (CycloneDDS through unitree_sdk2py's types, ``robot_domain_id`` on
``network_interface``), reads rt/lowstate (raw CDR bytes decoded by :mod:`g1_teleop.hardware.lowstate`, CRC checked),
runs :class:`~g1_teleop.hardware.bridge_safety.BridgeSafety` at ``lowcmd_rate_hz`` and writes what it returns to
rt/lowcmd (packed with its CRC by :mod:`g1_teleop.hardware.lowcmd`, mode_pr 0, mode_machine echoed from the latest
LowState). Wireless-remote combinations act here, on the press. With Dex3 hands it also reads
rt/dex3/*/state and writes rt/dex3/*/cmd through :class:`~g1_teleop.hardware.dex3.HandSafety`, following the body's
state. hw_bridge's ROS side sends it, over a :class:`~g1_teleop.hardware.bridge_link.Link`, the valid joint_commands,
the operator requests and the hand targets; it gets back the LowStates to publish (decimated to
``state_publish_rate_hz`` and ``joy_publish_rate_hz``), the hands' states, the answers, the reports and the
figures.

Why a process of its own: rclpy holds Python's GIL while it publishes, and a DDS publish can block (Fast
DDS's shared memory, a subscriber killed: about a second, measured). In one process that stopped every
Python thread, the LowCmd loop and its damping included (seen in the real.launch test). Here a ROS side that
stands still only starves the commands: the loop damps on their timeout, and the remote's e-stop still acts.

It ends on :class:`~g1_teleop.hardware.bridge_link.Stop`, on SIGTERM, or when the ROS side's end of the link closes
(hw_bridge died): the loop e-stops, writes damping for ``SHUTDOWN_DAMP_S`` and exits. SIGINT is ignored (a
terminal's Ctrl-C reaches the whole process group; the ROS side then says Stop).

Threads: the loop, and CycloneDDS's listener (LowState → the latest sample, remote combinations, states for
the ROS side). They share immutable samples by reference and a queue of operator requests.
"""

from __future__ import annotations

import collections
import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import traceback
from dataclasses import dataclass, field

import numpy as np

from g1_teleop.core.limits import JointCommand
from g1_teleop.core.realtime_loop import Pacer
from g1_teleop.core.robot_description import load_robot
from g1_teleop.hardware import bridge_link as msg
from g1_teleop.hardware.bridge_link import Link, LinkClosed
from g1_teleop.hardware.bridge_safety import (
    ActionRefused,
    BridgeSafety,
    BridgeSafetyConfig,
    CommandSample,
    OperatorAction,
    OperatorEvent,
    SafetyOutput,
    SafetyState,
    StateSample,
)
from g1_teleop.hardware.dex3 import SIDES, Dex3, HandSafety, HandSample, HandTarget, hand_cmd_message, hand_state_arrays
from g1_teleop.hardware.lowcmd import MODE_PR, NUM_BODY_JOINTS, lowcmd_to_cdr, motor_slots, pack_lowcmd
from g1_teleop.hardware.lowstate import lowstate_crc, lowstate_from_cdr, unpack_lowstate
from g1_teleop.hardware.wireless_remote import WirelessRemote, combo_pressed, parse_combo, parse_wireless_remote

SHUTDOWN_DAMP_S = 0.05  # on shutdown, write damping this long before the loop stops
FIGURES_PERIOD_S = 1.0  # figures to the ROS side
START_TIMEOUT_S = 60.0  # the ROS side's wait for Ready (imports and DDS discovery on a loaded machine)
OUTBOX_MAX = 1000  # reports, answers and problems waiting for a ROS side that does not read
GIL_SWITCH_INTERVAL_S = 0.0005  # so the loop waits at most this long for the listener thread (default 5 ms)
COUNTERS = ("lowstate_received", "lowstate_dropped", "lowcmd_written", "lowcmd_write_errors", "operator_events",
            "states_not_forwarded")


@dataclass(frozen=True)
class HwBridgeConfig:
    """hw_bridge's parameters (the ROS side's and this process's)."""

    model: str = ""  # URDF or MJCF path; empty: the project's model
    robot_config: str = ""  # robot YAML; empty: config/g1_29dof.yaml
    robot_domain_id: int = 0  # the robot's DDS domain (CycloneDDS)
    network_interface: str = "eth0"  # wired to the robot; lo for the virtual robot
    lowcmd_rate_hz: float = 500.0
    lowcmd_priority: int = 0  # SCHED_FIFO priority (1–99) of the LowCmd loop; 0: normal scheduling
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


@dataclass(frozen=True)
class Setup:
    """The first message to the LowCmd process: everything it needs, validated by the ROS side."""

    bridge: HwBridgeConfig
    safety: BridgeSafetyConfig
    dex3: Dex3 | None


class StartError(RuntimeError):
    """The LowCmd process could not start; the message says what to do."""


def answer(request: msg.Request, output: SafetyOutput, state: SafetyState) -> msg.Answer:
    """What a service tells the operator about its request, from the tick that handled it."""
    refusal = next((n for n in output.notices if isinstance(n, ActionRefused) and n.event == request.event), None)
    if refusal is not None:
        return msg.Answer(request.request_id, False, str(refusal))
    if output.transitions:
        return msg.Answer(request.request_id, True, "; ".join(str(t) for t in output.transitions))
    return msg.Answer(request.request_id, True, f"already {state.value}")


@dataclass
class _LoopStats:
    """What the loop measured since the last figures (s)."""

    periods: list[float] = field(default_factory=list)  # between tick starts
    busy: list[float] = field(default_factory=list)  # wall time of each tick
    thread_cpu_s: float = 0.0


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


class LowCmdProcess:
    """The loop and the robot's DDS. Build it with the link to the ROS side, then :meth:`run` it."""

    def __init__(self, link: Link, setup: Setup) -> None:
        cfg = self.cfg = setup.bridge
        self.link = link
        robot = load_robot(cfg.robot_config or None, cfg.model or None)
        if len(robot.joint_names) != NUM_BODY_JOINTS:
            raise StartError(f"hw_bridge drives the {NUM_BODY_JOINTS}-joint G1; the model has "
                             f"{len(robot.joint_names)} joints")
        self.safety = BridgeSafety(robot, setup.safety)
        self.combos = cfg.combos()
        self.counts = collections.Counter[str]()
        self._problems: set[str] = set()  # kinds already sent to the ROS side (it logs each once)
        self._outbox: collections.deque[object] = collections.deque()
        self._outbox_lock = threading.Lock()
        # Shared between threads, replaced whole, never mutated.
        self._state: StateSample | None = None
        self._mode_machine = 0
        self._command: CommandSample | None = None
        self._requests: collections.deque[msg.Request] = collections.deque()
        self._previous_remote: WirelessRemote | None = None
        self._state_due = _Decimator(cfg.state_publish_rate_hz)
        self._joy_due = _Decimator(cfg.joy_publish_rate_hz)
        self._stop_reason: str | None = None
        self._stats = _LoopStats()
        self._figures_mark = (time.monotonic(), time.process_time())
        self.dds = RobotDds(cfg.robot_domain_id, cfg.network_interface, self.on_lowstate)
        self.hands = HandDds(self.dds.participant, setup.dex3, cfg.dex3_rate_hz, self) if setup.dex3 else None

    # -- to the ROS side ----------------------------------------------------------------------------
    def post(self, message: object) -> None:
        """Send a message the ROS side must not miss (a report, an answer, a problem): kept in order and
        sent as soon as the link takes it."""
        with self._outbox_lock:
            if len(self._outbox) >= OUTBOX_MAX:
                self._outbox.popleft()
                self.counts["reports_lost"] += 1
            self._outbox.append(message)
        self._flush()

    def _flush(self) -> None:
        with self._outbox_lock:
            while self._outbox:
                try:
                    if not self.link.send(self._outbox[0], block=False):
                        return
                except LinkClosed:
                    return  # the loop sees it on its next read
                self._outbox.popleft()

    def problem(self, kind: str, message: str) -> None:
        """A problem of a kind: counted; the first of each kind goes to the ROS side's log."""
        self.counts[kind] += 1
        if kind not in self._problems:
            self._problems.add(kind)
            self.post(msg.Problem(kind, message))

    def forward(self, message: object) -> None:
        """A state for the ROS side to publish: dropped (and counted) when the link is full."""
        with contextlib.suppress(LinkClosed):
            if not self.link.send(message, block=False):
                self.counts["states_not_forwarded"] += 1

    # -- robot state (CycloneDDS listener thread) --------------------------------------------------
    def on_lowstate(self, sample: bytes, received_s: float) -> None:
        """One rt/lowstate sample (CDR bytes) and when it arrived (time.monotonic)."""
        try:
            packed = lowstate_from_cdr(sample)
        except ValueError as exc:
            self.counts["lowstate_dropped"] += 1
            self.problem("lowstate_encoding", f"dropped rt/lowstate: {exc}")
            return
        state = unpack_lowstate(packed)
        if self.cfg.lowstate_crc_check and lowstate_crc(packed) != int(state["crc"]):
            self.counts["lowstate_dropped"] += 1
            self.problem("lowstate_crc", "dropped rt/lowstate: its CRC does not match (if every sample fails, the "
                                         "robot does not fill it: lowstate_crc_check:=false)")
            return
        motors = state["motor_state"][:NUM_BODY_JOINTS]
        q, dq = motors["q"].astype(float), motors["dq"].astype(float)
        imu = state["imu_state"]
        self._mode_machine = int(state["mode_machine"])
        self._state = StateSample(received_s, q, dq, imu["quaternion"].astype(float))
        self.counts["lowstate_received"] += 1
        try:
            remote = parse_wireless_remote(state["wireless_remote"].tobytes())
        except ValueError as exc:
            self.problem("remote", f"ignored a wireless remote reading: {exc}")
            remote = None
        if remote is not None:
            for action, combo in self.combos.items():
                if combo_pressed(self._previous_remote, remote, combo):
                    self.counts["operator_events"] += 1
                    self._requests.append(msg.Request(OperatorEvent(action, "wireless remote")))
            self._previous_remote = remote
        publish_state = self._state_due(received_s)
        publish_joy = remote is not None and self._joy_due(received_s)
        if publish_state or publish_joy:
            self.forward(msg.RobotState(q, dq, motors["tau_est"].astype(float), imu.copy() if publish_state else None,
                                        remote if publish_joy else None))

    # -- from the ROS side (loop thread) -----------------------------------------------------------
    def read_link(self) -> None:
        """Take every message the ROS side has sent; a closed link stops the loop."""
        while self._stop_reason is None:
            try:
                message = self.link.receive(timeout_s=0)
            except LinkClosed:
                self._stop_reason = "hw_bridge's ROS side exited"
                return
            if message is None:
                return
            if isinstance(message, CommandSample):
                self._command = message
            elif isinstance(message, msg.Request):
                self.counts["operator_events"] += 1
                self._requests.append(message)
            elif isinstance(message, msg.HandCommand) and self.hands is not None:
                self.hands.targets[message.side] = message.target
            elif isinstance(message, msg.Stop):
                self._stop_reason = "bridge shutdown"

    def stop(self, reason: str) -> None:
        """Damp and end the loop (from any thread, or a signal handler)."""
        if self._stop_reason is None:
            self._stop_reason = reason

    # -- the loop -----------------------------------------------------------------------------------
    def run(self) -> None:
        if self.cfg.lowcmd_priority:
            try:  # pid 0: this thread
                os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(self.cfg.lowcmd_priority))
            except OSError as exc:
                self.problem("sched_fifo", f"LowCmd loop keeps normal scheduling: SCHED_FIFO "
                                           f"{self.cfg.lowcmd_priority} refused ({exc}; needs CAP_SYS_NICE)")
        sys.setswitchinterval(GIL_SWITCH_INTERVAL_S)
        period = 1.0 / self.cfg.lowcmd_rate_hz
        pacer = Pacer(period, max_lag_s=period)  # more than a tick behind: skip ahead instead of bursting
        last_start: float | None = None
        damp_until: float | None = None
        while damp_until is None or time.monotonic() < damp_until:
            pacer.wait()
            start, cpu = time.monotonic(), time.thread_time()
            self.read_link()  # (just before the tick: a command waits for at most one period)
            if damp_until is None and self._stop_reason is not None:
                self._requests.append(msg.Request(OperatorEvent(OperatorAction.ESTOP, self._stop_reason)))
                damp_until = start + SHUTDOWN_DAMP_S
            self.tick(start)
            stats = self._stats
            if last_start is not None:
                stats.periods.append(start - last_start)
            stats.busy.append(time.monotonic() - start)
            stats.thread_cpu_s += time.thread_time() - cpu
            last_start = start
            if start - self._figures_mark[0] >= FIGURES_PERIOD_S:
                self.post(msg.Figures(self.figures(start)))
        self._flush()

    def tick(self, now: float) -> None:
        requests = []
        while self._requests:
            requests.append(self._requests.popleft())
        output = self.safety.step(now, self._state, self._command, [r.event for r in requests])
        if output.command is not None:
            self.write(output.command)
        if self.hands is not None:
            self.hands.tick(now, self.safety.state)
        for request in requests:
            if request.request_id:
                self.post(answer(request, output, self.safety.state))
        if output.transitions or output.notices:
            self.post(msg.Report(self.safety.state, output.transitions, output.notices))
        else:
            self._flush()

    def write(self, command: JointCommand) -> None:
        packed, _ = pack_lowcmd(MODE_PR, self._mode_machine, **motor_slots(command))
        if self.dds.write(lowcmd_to_cdr(packed)) < 0:
            self.counts["lowcmd_write_errors"] += 1
        else:
            self.counts["lowcmd_written"] += 1

    def figures(self, now: float) -> dict[str, object]:
        """State, counters and the loop's timing since the last figures."""
        stats, self._stats = self._stats, _LoopStats()
        cpu = time.process_time()
        wall = now - self._figures_mark[0]
        values: dict[str, object] = {"state": self.safety.state.value, "lowcmd_pid": os.getpid()}
        if stats.periods:
            periods_ms, busy_us = np.array(stats.periods) * 1e3, np.array(stats.busy) * 1e6
            values.update({
                "lowcmd_period_p50_ms": round(float(np.percentile(periods_ms, 50)), 3),
                "lowcmd_period_p99_ms": round(float(np.percentile(periods_ms, 99)), 3),
                "lowcmd_period_max_ms": round(float(periods_ms.max()), 3),
                "lowcmd_tick_p50_us": round(float(np.percentile(busy_us, 50)), 1),
                "lowcmd_tick_p99_us": round(float(np.percentile(busy_us, 99)), 1),
                "lowcmd_loop_cpu_percent": round(100 * stats.thread_cpu_s / wall, 2),
                "lowcmd_process_cpu_percent": round(100 * (cpu - self._figures_mark[1]) / wall, 1),
            })
        self._figures_mark = (now, cpu)
        state = self._state
        values.update({
            "lowstate_age_ms": "none" if state is None else round((now - state.received_s) * 1e3, 1),
            "mode_machine": self._mode_machine,
            **{name: self.counts[name] for name in COUNTERS},
            **({} if self.hands is None else dict(self.hands.counts)),
        })
        return values

    def damp_once(self) -> None:
        """One damping LowCmd, if the robot's DDS still works (after a failure of the loop)."""
        with contextlib.suppress(Exception):
            self.write(JointCommand.damping(NUM_BODY_JOINTS, self.safety.damping_kd))

    def close(self) -> None:
        if self.hands is not None:
            self.hands.close()
        self.dds.close()


class RobotDds:
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
            raise StartError(f"hw_bridge needs unitree_sdk2py (scripts/install_robot_sdk.sh installs it): {exc}") \
                from None
        self._take, self._write = ddspy_take, ddspy_write
        self._on_lowstate = on_lowstate
        # The SDK's process-wide channel factory holds the domain's configuration (the interface); this
        # participant shares that domain.
        try:
            ChannelFactoryInitialize(domain_id, interface)
        except Exception as exc:  # the SDK raises a bare Exception (and prints CycloneDDS's reason)
            raise StartError(f"cannot open the robot's DDS domain {domain_id} on interface {interface!r}: {exc}") \
                from None
        self.participant = DomainParticipant(domain_id)
        self._writer = DataWriter(self.participant, Topic(self.participant, "rt/lowcmd", LowCmd_))
        self._reader = DataReader(self.participant, Topic(self.participant, "rt/lowstate", LowState_),
                                  listener=Listener(on_data_available=self._on_data))

    def _on_data(self, reader) -> None:
        received_s = time.monotonic()
        samples = self._take(reader._ref, 8)
        if isinstance(samples, int):  # a DDS error code
            return
        latest = next((data for data, info in reversed(samples) if info.valid_data), None)
        if latest is not None:
            self._on_lowstate(latest, received_s)

    def write(self, cdr: bytes) -> int:
        """Write one LowCmd sample; returns the DDS return code (negative: an error)."""
        return self._write(self._writer._ref, cdr)

    def close(self) -> None:
        """Stop listening, then delete the endpoints and the participant."""
        self._reader.set_listener(None)
        del self._reader, self._writer, self.participant


class HandDds:
    """The Dex3 hands' robot side: rt/dex3/{left,right}/state in (forwarded to the ROS side at ``rate_hz``
    per hand), rt/dex3/{left,right}/cmd out at ``rate_hz`` through each hand's :class:`HandSafety`."""

    def __init__(self, participant, dex3: Dex3, rate_hz: float, process: LowCmdProcess) -> None:
        from cyclonedds.core import Listener
        from cyclonedds.internal import InvalidSample
        from cyclonedds.pub import DataWriter
        from cyclonedds.sub import DataReader
        from cyclonedds.topic import Topic
        from unitree_sdk2py.idl.unitree_hg.msg.dds_ import HandCmd_, HandState_

        self.process = process
        self._invalid = InvalidSample
        self.safety = {side: HandSafety(dex3, side) for side in SIDES}
        self.counts = collections.Counter[str]()
        self._tick_due = _Decimator(rate_hz)
        self._forward_due = {side: _Decimator(rate_hz) for side in SIDES}
        # Shared between threads, replaced whole: the latest HandState and target of each hand.
        self._states: dict[str, HandSample | None] = dict.fromkeys(SIDES)
        self.targets: dict[str, HandTarget | None] = dict.fromkeys(SIDES)
        p = participant
        self._writers = {side: DataWriter(p, Topic(p, f"rt/dex3/{side}/cmd", HandCmd_)) for side in SIDES}
        self._readers = {side: DataReader(p, Topic(p, f"rt/dex3/{side}/state", HandState_), listener=Listener(
            on_data_available=lambda reader, side=side: self.on_state(side, reader))) for side in SIDES}

    def on_state(self, side: str, reader) -> None:
        """CycloneDDS's listener thread: the newest HandState of one hand."""
        received_s = time.monotonic()
        samples = [s for s in reader.take(8) if not isinstance(s, self._invalid)]  # (a writer went away)
        if not samples:
            return
        try:
            q, dq, tau = hand_state_arrays(samples[-1])
        except ValueError as exc:
            self.process.problem("hand_state", f"dropped rt/dex3/{side}/state: {exc}")
            return
        if not (np.isfinite(q).all() and np.isfinite(dq).all()):
            self.process.problem("hand_state_nan", f"dropped rt/dex3/{side}/state: non-finite q or dq")
            return
        self._states[side] = HandSample(received_s, q, dq)
        if self._forward_due[side](received_s):
            self.process.forward(msg.HandState(side, q, dq, tau))

    def tick(self, now_s: float, body: SafetyState) -> None:
        """Write both hands' commands if a hand period has passed (called every LowCmd tick)."""
        if not self._tick_due(now_s):
            return
        for side in SIDES:
            command = self.safety[side].step(now_s, body, self._states[side], self.targets[side])
            if command is not None:
                self._writers[side].write(hand_cmd_message(command))
                self.counts["handcmd_written"] += 1

    def close(self) -> None:
        for reader in self._readers.values():
            reader.set_listener(None)
        del self._readers, self._writers


def start(setup: Setup) -> tuple[subprocess.Popen, Link, msg.Ready, list[object]]:
    """Start the LowCmd process and wait until its loop runs; also returns the reports and problems it sent
    before (states are dropped). Raises StartError with its reason."""
    link, theirs = Link.pair()
    process = subprocess.Popen([sys.executable, "-m", "g1_teleop.hardware.lowcmd_process", str(theirs.fileno())],
                               pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL)
    theirs.close()
    early: list[object] = []
    reply = None
    deadline = time.monotonic() + START_TIMEOUT_S
    try:
        link.send(setup)
        while not isinstance(reply, msg.Ready | msg.Failed) and time.monotonic() < deadline:
            reply = link.receive(max(0.0, deadline - time.monotonic()))
            if not isinstance(reply, msg.Ready | msg.Failed | msg.RobotState | msg.HandState | None):
                early.append(reply)
    except LinkClosed:
        reply = None
    if isinstance(reply, msg.Ready):
        return process, link, reply, early
    with contextlib.suppress(ProcessLookupError):
        process.kill()
    process.wait()
    link.close()
    if isinstance(reply, msg.Failed):
        raise StartError(reply.reason)
    if process.returncode is not None and process.returncode > 0:
        raise StartError(f"the LowCmd process exited with code {process.returncode} while starting (its output "
                         "is above)")
    raise StartError(f"the LowCmd process did not start within {START_TIMEOUT_S:g} s (its output is above)")


def main(fd: int) -> int:
    """The LowCmd process: read the Setup from the link, open the robot's DDS, run the loop."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    link = Link(socket.socket(fileno=fd))
    try:
        setup = link.receive()
    except LinkClosed:
        return 1
    try:
        process = LowCmdProcess(link, setup)
    except Exception as exc:  # a reason for the operator: a missing SDK, a wrong interface, a bad model
        link.send(msg.Failed(str(exc) if isinstance(exc, StartError | ValueError | OSError)
                             else "".join(traceback.format_exception(exc))))
        return 2
    signal.signal(signal.SIGTERM, lambda *_: process.stop("bridge shutdown"))
    link.send(msg.Ready(os.getpid()))
    try:
        process.run()
    except Exception as exc:  # a bug: damp once, then tell the ROS side (it raises it)
        process.damp_once()
        with contextlib.suppress(LinkClosed):
            link.send(msg.Failed("the LowCmd loop failed (one damping LowCmd was attempted):\n"
                                 + "".join(traceback.format_exception(exc))), block=False)
        return 1
    finally:
        process.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1])))
