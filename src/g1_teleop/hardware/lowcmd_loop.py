"""The LowCmd loop: hw_bridge's robot side, run by its LowCmd process (:mod:`g1_teleop.hardware.lowcmd_process`).
ROS-free.

It reads rt/lowstate from the robot's DDS (:mod:`g1_teleop.hardware.robot_dds`; raw CDR bytes decoded by
:mod:`g1_teleop.hardware.lowstate`, CRC checked), runs :class:`~g1_teleop.hardware.bridge_safety.BridgeSafety` at
``lowcmd_rate_hz`` and writes what it returns to rt/lowcmd (packed with its CRC by :mod:`g1_teleop.hardware.lowcmd`,
mode_pr 0, mode_machine echoed from the latest LowState, as unitree_sdk2_python's
example/g1/low_level/g1_low_level_example.py does). Wireless-remote combinations act here, on the press. With
Dex3 hands, :class:`~g1_teleop.hardware.dex3_dds.HandDds` follows the body's state. From the ROS side, over a
:class:`~g1_teleop.hardware.bridge_link.Link`: the valid joint_commands, the operator requests and the hand
targets; to it: the LowStates to publish (decimated to ``state_publish_rate_hz`` and ``joy_publish_rate_hz``),
the hands' states, the answers, the reports and the figures.

Each tick writes its LowCmd first, from the newest command and the LowState taken at the end of the tick before,
then takes the newest LowState (the reader keeps only the newest, as the SDK's channels do): the write then comes a
fixed, short time after the wake-up, not after a LowState's decoding, whose time varies (measured at SCHED_FIFO 50:
LowState 92 / 271 µs p50 / p99, which put the write 279 / 531 µs into the tick). For it the safety machine sees a
state at most one period older, and a wireless-remote press (an e-stop among them) acts one tick later (2 ms). The
loop takes LowStates instead of having CycloneDDS's listener thread call into Python for each one: at 500 Hz each
such call woke a second thread of this process, which then competed with the loop for the interpreter. A LowState
counts as received when the loop takes it, within a period of its arrival; a listener's timestamp was the time its
call ran, as late as the loop when the process is starved. Threads: the loop (and, with Dex3 hands, CycloneDDS's
listener for their states); they share immutable samples by reference and a queue of operator requests.
"""

from __future__ import annotations

import collections
import contextlib
import os
import threading
import time
from dataclasses import dataclass, field

import numpy as np

from g1_teleop.core.decimator import Decimator
from g1_teleop.core.limits import JointCommand
from g1_teleop.core.realtime_loop import Pacer
from g1_teleop.hardware import bridge_link as msg
from g1_teleop.hardware.bridge_config import Setup, load_bridge_robot
from g1_teleop.hardware.bridge_link import Link, LinkClosed
from g1_teleop.hardware.bridge_safety import (
    ActionRefused,
    BridgeSafety,
    CommandSample,
    OperatorAction,
    OperatorEvent,
    SafetyOutput,
    SafetyState,
    StateSample,
)
from g1_teleop.hardware.dex3_dds import HandDds
from g1_teleop.hardware.lowcmd import NUM_BODY_JOINTS, LowCmdEncoder
from g1_teleop.hardware.lowstate import lowstate_crc, lowstate_from_cdr, unpack_lowstate
from g1_teleop.hardware.robot_dds import TOPIC_LOWCMD, TOPIC_LOWSTATE, DdsError, RobotDds
from g1_teleop.hardware.wireless_remote import WirelessRemote, combo_pressed, parse_wireless_remote

SHUTDOWN_DAMP_S = 0.05  # on shutdown, write damping this long before the loop stops
FIGURES_PERIOD_S = 1.0  # figures to the ROS side
OUTBOX_MAX = 1000  # reports, answers and problems waiting for a ROS side that does not read
COUNTERS = ("lowstate_received", "lowstate_dropped", "lowcmd_written", "lowcmd_write_errors", "operator_events",
            "states_not_forwarded")


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


class LowCmdLoop:
    """The loop and the robot's DDS. Build it with the link to the ROS side, then :meth:`run` it; ValueError or
    :class:`~g1_teleop.hardware.robot_dds.RobotDdsUnavailable` say why it cannot start."""

    def __init__(self, link: Link, setup: Setup) -> None:
        cfg = self.cfg = setup.bridge
        self.link = link
        self.safety = BridgeSafety(load_bridge_robot(cfg), setup.safety)
        self.combos = cfg.combos()
        self.counts = collections.Counter[str]()
        self._problems: set[str] = set()  # kinds already sent to the ROS side (it logs each once)
        self._outbox: collections.deque[object] = collections.deque()
        self._outbox_lock = threading.Lock()
        # Shared between threads, replaced whole, never mutated.
        self._state: StateSample | None = None
        self._mode_machine = 0
        self._command: CommandSample | None = None
        self._command_publishers: int | None = None  # joint_command's, as the ROS side last counted them
        self._requests: collections.deque[msg.Request] = collections.deque()
        self._previous_remote: WirelessRemote | None = None
        self._state_due = Decimator(cfg.state_publish_rate_hz)
        self._joy_due = Decimator(cfg.joy_publish_rate_hz)
        self._stop_reason: str | None = None
        self._stats = _LoopStats()
        self._figures_mark = (time.monotonic(), time.process_time())
        self.dds = RobotDds(cfg.robot_domain_id, cfg.network_interface)
        self._lowcmd = self.dds.raw_writer(TOPIC_LOWCMD)
        self._encoder = LowCmdEncoder()
        # (the SDK's Python deserialiser costs ~0.4 ms a LowState: raw bytes, the newest, taken by the loop)
        self._lowstate = self.dds.raw_reader(TOPIC_LOWSTATE)
        self.hands = HandDds(self.dds, setup.dex3, cfg.dex3_rate_hz, self.problem, self.forward) \
            if setup.dex3 else None

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

    # -- robot state (loop thread) ---------------------------------------------------------------
    def read_lowstate(self, now_s: float) -> None:
        """Take the newest rt/lowstate, if one came since the last tick; it counts as received ``now_s``."""
        try:
            samples = self._lowstate.take()
        except DdsError as exc:
            self.problem("lowstate_take", f"could not take rt/lowstate: {exc}")
            return
        if samples:
            self.on_lowstate(samples[-1], now_s)

    def on_lowstate(self, sample: bytes, received_s: float) -> None:
        """One rt/lowstate sample (CDR bytes) and when it was received (time.monotonic)."""
        try:
            packed = lowstate_from_cdr(sample)
        except ValueError as exc:
            self.counts["lowstate_dropped"] += 1
            self.problem("lowstate_encoding", f"dropped rt/lowstate: {exc}")
            return
        state = unpack_lowstate(packed)
        if self.cfg.lowstate_crc_check and lowstate_crc(packed) != int(state["crc"]):
            self.counts["lowstate_dropped"] += 1
            self.problem("lowstate_crc", f"dropped rt/lowstate: its CRC does not match (carried {int(state['crc'])}); "
                                         "if every sample fails, the peer does not fill it (Unitree's simulator "
                                         "unitree_mujoco leaves it 0): launch with lowstate_crc_check:=false")
            return
        # LowState.tick is not used (unitree_mujoco leaves it 0): a state's age is its arrival time's, and
        # mode_machine, whatever it is (0 there), is echoed in the LowCmds.
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
            elif isinstance(message, msg.CommandPublishers):
                self._command_publishers = message.count
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
        """Tick at ``lowcmd_rate_hz`` until stopped, then damp for ``SHUTDOWN_DAMP_S``."""
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
            self.read_lowstate(time.monotonic())  # (after the write: the state for the next tick)
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
        output = self.safety.step(now, self._state, self._command, [r.event for r in requests],
                                  command_source_gone=self._command_publishers == 0)
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
        try:
            self._lowcmd.write(self._encoder.encode(command, self._mode_machine))
        except DdsError:
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
        """Stop listening to the robot, then delete its DDS endpoints and participant."""
        self.dds.close()
