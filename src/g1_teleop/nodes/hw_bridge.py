"""hw_bridge: a G1 (or the virtual robot) over Unitree's own DDS interface, behind the ROS topic contract.

Two processes. This one is the ROS side; the robot side, :mod:`g1_teleop.hardware.lowcmd_process`, is a process of
its own that owns the robot's DDS (CycloneDDS, domain ``robot_domain_id`` on ``network_interface``): it
reads rt/lowstate, runs the safety state machine (:class:`~g1_teleop.hardware.bridge_safety.BridgeSafety`) and
writes rt/lowcmd at ``lowcmd_rate_hz``, so that nothing rclpy does (a publish can block with the GIL held)
can stop the LowCmd loop. The two talk over a :class:`~g1_teleop.hardware.bridge_link.Link`.

ROS side: joint_command (29 named joints; a malformed message is rejected with one warning per kind of
problem) → the LowCmd process with the ``gain_profile`` gains. From the LowState stream (500 Hz), decimated
there on average: joint_states (q, dq, tau_est) and imu at ``state_publish_rate_hz`` (200 Hz), joy at
``joy_publish_rate_hz`` (50 Hz: the wireless remote, axes lx, ly, rx, ry, L2, the 16 buttons in
``wireless_remote.BUTTONS`` order, frame_id "wireless_remote"). diagnostics at 1 Hz and on every
transition (the state, why, and both processes' figures). Operator actions (start, activate, e-stop) come
from the services hw_bridge/start, hw_bridge/activate and hw_bridge/estop (std_srvs/Trigger: the response
says what happened or why it was refused), from wireless-remote combinations (read by the LowCmd process
itself, so the remote's e-stop acts even when this process stands still) and, when ``joy_*_button`` are
set, from the buttons of a Joy device on ``joy`` (messages with frame_id "wireless_remote" are this node's
own). With ``dex3``, the Dex3 hands' topics go through :mod:`g1_teleop.ros.dex3_topics`.

Threads: the executor (ROS callbacks, logging, diagnostics) and the link's reader (states → joint_states,
imu, joy, hand_states; answers → the waiting service; reports → the executor through a guard condition).
Shutdown: the LowCmd process writes damping for 50 ms and exits, then rclpy shuts down. If this process
dies, the LowCmd process damps and exits on its own; if it exits, this node fails with its reason.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import rclpy.logging
from diagnostic_msgs.msg import DiagnosticStatus
from rclpy.node import Node
from sensor_msgs.msg import Imu, JointState, Joy
from std_srvs.srv import Trigger

from g1_teleop.core.joint_vector import JointIndex, MalformedJointMessage
from g1_teleop.core.robot_description import load_robot
from g1_teleop.hardware import bridge_link as msg
from g1_teleop.hardware import lowcmd_process
from g1_teleop.hardware.bridge_link import Link, LinkClosed
from g1_teleop.hardware.bridge_safety import (
    BridgeSafety,
    BridgeSafetyConfig,
    CommandRejected,
    CommandSample,
    OperatorAction,
    OperatorEvent,
    SafetyState,
    WritingResumed,
    WritingStopped,
)
from g1_teleop.hardware.dex3 import Dex3ConfigError, load_dex3
from g1_teleop.hardware.lowcmd import NUM_BODY_JOINTS
from g1_teleop.hardware.lowcmd_process import HwBridgeConfig, Setup, StartError
from g1_teleop.hardware.wireless_remote import WirelessRemote
from g1_teleop.ros.dex3_topics import HandTopics
from g1_teleop.ros.diagnostics import Diagnostics, WarnOnce
from g1_teleop.ros.messages import command_from_joint_state, imu_msg, joint_state_msg
from g1_teleop.ros.node_main import run
from g1_teleop.ros.parameters import ConfigError, declare_config
from g1_teleop.ros.qos import QOS_COMMAND, QOS_SENSOR, QOS_STATE

REMOTE_FRAME = "wireless_remote"  # frame_id of the joy messages this node publishes
SERVICE_TIMEOUT_S = 0.5  # a service's wait for the LowCmd loop's answer
EXIT_TIMEOUT_S = 1.0  # on shutdown, the wait for the LowCmd process to damp and exit


@dataclass
class _Waiting:
    """A service's request on its way: the link's reader sets ``answer``, then ``done``."""

    done: threading.Event = field(default_factory=threading.Event)
    answer: msg.Answer | None = None


class HwBridge(Node):
    def __init__(self) -> None:
        super().__init__("hw_bridge")
        self._lowcmd: subprocess.Popen | None = None  # set once the LowCmd process runs
        self._link: Link | None = None
        self._closing = False
        cfg = self.cfg = declare_config(self, HwBridgeConfig)
        safety_cfg = declare_config(self, BridgeSafetyConfig)
        robot = load_robot(cfg.robot_config or None, cfg.model or None)
        if len(robot.joint_names) != NUM_BODY_JOINTS:
            raise ConfigError(f"hw_bridge drives the {NUM_BODY_JOINTS}-joint G1; the model has "
                              f"{len(robot.joint_names)} joints")
        try:
            BridgeSafety(robot, safety_cfg)  # its gain profiles exist: said here, before a process starts
            self.kp, self.kd = robot.gains(cfg.gain_profile)
        except KeyError as exc:  # an unknown gain profile
            raise ConfigError(f"invalid parameters for hw_bridge: {exc.args[0]}") from None
        try:
            dex3 = load_dex3(Path(cfg.dex3_config) if cfg.dex3_config else None) if cfg.dex3 else None
        except Dex3ConfigError as exc:
            raise ConfigError(str(exc)) from None
        self.joint_names = list(robot.joint_names)
        self.index = JointIndex(robot.joint_names)
        self.joy_buttons = cfg.joy_buttons()
        self.warn = WarnOnce(self)
        self.state = SafetyState.WAIT_FOR_STATE
        self.counts = {"commands_received": 0, "commands_rejected": 0, "link_dropped": 0}
        self._command_received_s: float | None = None
        self._command_gap_max_s = 0.0  # longest wait between valid joint_commands, per diagnostics window
        self._joy_held: dict[OperatorAction, bool] = {}
        self._request_ids = itertools.count(1)
        self._waiting: dict[int, _Waiting] = {}  # by request id
        self._inbox: list[object] = []  # from the link's reader to the executor (list.append is atomic)
        self._figures: dict[str, object] = {}  # the LowCmd process's latest
        self._cpu_mark = (time.monotonic(), time.process_time())
        self._ros_figures: dict[str, object] = {}

        self.pub_joints = self.create_publisher(JointState, "joint_states", QOS_STATE)
        self.pub_imu = self.create_publisher(Imu, "imu", QOS_STATE)
        self.pub_joy = self.create_publisher(Joy, "joy", QOS_SENSOR)
        self.create_subscription(JointState, "joint_command", self.on_command, QOS_COMMAND)
        if self.joy_buttons:  # (it also hears this node's own joy: a cost worth paying only when used)
            self.create_subscription(Joy, "joy", self.on_joy, QOS_SENSOR)
        for action in OperatorAction:
            self.create_service(Trigger, f"hw_bridge/{action.value}",
                                lambda request, response, a=action: self.on_service(a, response))
        self.hands = HandTopics(self, dex3, self.send, self.warn) if dex3 is not None else None
        self._inbox_guard = self.create_guard_condition(self.handle_inbox)
        self.diagnostics = Diagnostics(self, self.diagnostic_values)
        self.report(SafetyState.WAIT_FOR_STATE, "waiting for rt/lowstate")

        try:
            self._lowcmd, self._link, ready, early = lowcmd_process.start(Setup(cfg, safety_cfg, dex3))
        except StartError as exc:
            raise ConfigError(str(exc)) from None
        for message in early:
            self.deliver(message)
        self._reader = threading.Thread(target=self.read_link, name="bridge_link", daemon=True)
        self._reader.start()
        self.get_logger().info(
            f"robot DDS domain {cfg.robot_domain_id} on {cfg.network_interface}: waiting for rt/lowstate; "
            f"LowCmd at {cfg.lowcmd_rate_hz:g} Hz from process {ready.pid}; operator: remote {cfg.start_combo} / "
            f"{cfg.activate_combo} / {cfg.estop_combo} (start / activate / e-stop), services "
            f"hw_bridge/start|activate|estop" + (f"; Dex3 hands at {cfg.dex3_rate_hz:g} Hz" if self.hands else "")
        )

    # -- to the LowCmd process ---------------------------------------------------------------------
    def send(self, message: object) -> None:
        """Send to the LowCmd process without waiting: a message it cannot take now (it stands still) is
        dropped and counted, which leaves the loop with a stale command (it damps). If it has exited, the
        reader thread says so and the node fails."""
        if self._link is not None:
            with contextlib.suppress(LinkClosed):
                if not self._link.send(message, block=False):
                    self.counts["link_dropped"] += 1

    # -- from the LowCmd process (the link's reader thread) ----------------------------------------
    def read_link(self) -> None:
        assert self._link is not None
        while True:
            try:
                message = self._link.receive()
            except LinkClosed:
                if not self._closing:
                    self.deliver(msg.Failed(f"the LowCmd process exited (code {self._lowcmd.wait()}): "
                                            "the robot is no longer commanded; its output is above"))
                return
            except OSError:  # the link was closed by this process: shutting down
                return
            if isinstance(message, msg.RobotState):
                self.publish_state(message)
            elif isinstance(message, msg.HandState) and self.hands is not None:
                self.publish_guarded(self.hands.publish, message)
            elif isinstance(message, msg.Answer):
                waiting = self._waiting.get(message.request_id)
                if waiting is not None:
                    waiting.answer = message
                    waiting.done.set()
            else:
                self.deliver(message)

    def deliver(self, message: object) -> None:
        """Hand a report, problem, figures or failure to the executor."""
        self._inbox.append(message)
        if self.context.ok() and not self._closing:
            self._inbox_guard.trigger()

    def publish_guarded(self, publish, *args) -> None:
        try:
            publish(*args)
        except Exception:
            if self.context.ok():
                raise
            # A signal shut ROS down while this thread was publishing; the LowCmd process stops next.

    def publish_state(self, state: msg.RobotState) -> None:
        stamp = self.get_clock().now().to_msg()
        if state.imu is not None:
            joints = joint_state_msg(self.joint_names, stamp, state.q, state.dq, state.tau)
            self.publish_guarded(self.pub_joints.publish, joints)
            imu = state.imu
            self.publish_guarded(self.pub_imu.publish,
                                 imu_msg(stamp, imu["quaternion"], imu["gyroscope"], imu["accelerometer"]))
        if state.remote is not None:
            self.publish_guarded(self.pub_joy.publish, joy_msg(state.remote, stamp))

    # -- what the LowCmd process reports (executor thread) ------------------------------------------
    def handle_inbox(self) -> None:
        while self._inbox:
            self.handle_message(self._inbox.pop(0))

    def handle_message(self, message: object, logger=None) -> None:
        logger = logger or self.get_logger()
        if isinstance(message, msg.Failed):
            raise RuntimeError(message.reason)
        if isinstance(message, msg.Figures):
            self._figures = message.values
        elif isinstance(message, msg.Problem):
            self.warn(message.kind, message.message)
        elif isinstance(message, msg.Report):
            self.state = message.state
            for transition in message.transitions:
                if transition.current is SafetyState.DAMP:
                    logger.warning(f"safety: {transition}")
                else:
                    logger.info(f"safety: {transition}")
                self.report(transition.current, str(transition))
            for notice in message.notices:
                if isinstance(notice, CommandRejected):
                    self.warn("bridge_rejected", str(notice))
                elif isinstance(notice, WritingStopped):
                    logger.error(str(notice))
                    self.report(message.state, str(notice), DiagnosticStatus.ERROR)
                elif isinstance(notice, WritingResumed):
                    logger.info(str(notice))
                    self.report(message.state, str(notice))
                else:
                    logger.warning(str(notice))

    def report(self, state: SafetyState, reason: str, level: int | None = None) -> None:
        """Publish the state and why on diagnostics (WARN in DAMP unless ``level`` says otherwise)."""
        if level is None:
            level = DiagnosticStatus.WARN if state is SafetyState.DAMP else DiagnosticStatus.OK
        with contextlib.suppress(Exception):  # (not after shutdown: the shutdown damping is logged only)
            self.diagnostics.set(level, f"{state.value}: {reason}")

    def diagnostic_values(self) -> dict[str, object]:
        """The state, this process's counters and CPU, and the LowCmd process's figures (its last second)."""
        now, cpu = time.monotonic(), time.process_time()
        wall = now - self._cpu_mark[0]
        values = {**self._figures, "state": self.state.value, **self.counts}
        if self.hands is not None:
            values.update(self.hands.counts)
        if wall >= 0.5:  # a transition's extra publication keeps the previous figures
            self._ros_figures = {"process_cpu_percent": round(100 * (cpu - self._cpu_mark[1]) / wall, 1),
                                 "joint_command_gap_max_ms": round(self._command_gap_max_s * 1e3, 1)}
            self._command_gap_max_s = 0.0
            self._cpu_mark = (now, cpu)
        values.update(self._ros_figures)
        return values

    # -- operator and policy (executor thread) -----------------------------------------------------
    def on_service(self, action: OperatorAction, response: Trigger.Response) -> Trigger.Response:
        request_id = next(self._request_ids)
        waiting = self._waiting[request_id] = _Waiting()
        self.send(msg.Request(OperatorEvent(action, "service"), request_id))
        if waiting.done.wait(timeout=SERVICE_TIMEOUT_S) and waiting.answer is not None:
            response.success, response.message = waiting.answer.success, waiting.answer.message
        else:
            response.success, response.message = False, \
                f"the LowCmd loop did not answer within {SERVICE_TIMEOUT_S:g} s"
        del self._waiting[request_id]
        return response

    def on_joy(self, joy: Joy) -> None:
        if joy.header.frame_id == REMOTE_FRAME:
            return
        for action, index in self.joy_buttons.items():
            if index >= len(joy.buttons):
                self.warn("joy_buttons", f"joy has {len(joy.buttons)} buttons; joy_{action.value}_button = "
                                         f"{index} is not one of them")
                continue
            held = joy.buttons[index] != 0
            if held and not self._joy_held.get(action, False):
                self.send(msg.Request(OperatorEvent(action, f"joy button {index}")))
            self._joy_held[action] = held

    def on_command(self, command_msg: JointState) -> None:
        received_s = time.monotonic()
        try:
            command = command_from_joint_state(command_msg, self.index, self.kp, self.kd)
        except MalformedJointMessage as exc:
            self.counts["commands_rejected"] += 1
            self.warn(exc.kind, f"rejected joint_command: {exc}; it does not reach the robot")
            return
        if self._command_received_s is not None:
            self._command_gap_max_s = max(self._command_gap_max_s, received_s - self._command_received_s)
        self._command_received_s = received_s
        self.send(CommandSample(received_s, command))
        self.counts["commands_received"] += 1

    # -- shutdown ----------------------------------------------------------------------------------
    def destroy_node(self) -> None:
        """Stop the LowCmd process (it damps for 50 ms and exits), log what it reported, then the ROS side."""
        self._closing = True
        if self._lowcmd is not None:
            self.send(msg.Stop())
            try:
                self._lowcmd.wait(EXIT_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self._lowcmd.kill()
                self._lowcmd.wait()
            self._reader.join(timeout=1.0)
        if self._link is not None:
            self._link.close()
        logger = rclpy.logging.get_logger(f"{self.get_name()}.shutdown")  # ROS may be down: console only
        while self._inbox:  # the shutdown damping: the executor no longer runs
            message = self._inbox.pop(0)
            if isinstance(message, msg.Report):
                with contextlib.suppress(Exception):
                    self.handle_message(message, logger)
        super().destroy_node()


def joy_msg(remote: WirelessRemote, stamp) -> Joy:
    """sensor_msgs/Joy of the wireless remote: its axes and buttons (``wireless_remote``), frame_id
    "wireless_remote" (so that this node's own joy is never taken for a Joy device's)."""
    joy = Joy(axes=list(remote.axes), buttons=[int(b) for b in remote.buttons])
    joy.header.stamp, joy.header.frame_id = stamp, REMOTE_FRAME
    return joy


# rclpy publishes with the GIL held, and Fast DDS's shared-memory transport can block a publish for about a
# second when a subscriber process has died (measured: a SIGKILLed reliable subscriber on a loaded 2-core
# machine blocked publish for 1006 ms; over UDP only the worst was 9 ms). The LowCmd loop, in its own
# process, no longer stands still with it, but joint_states would, and the policy with them. So this
# node's ROS participant sends over UDP only, unless the user chose the transports. Fast DDS ≥ 2.13
# (Jazzy, Kilted) reads this variable; on Humble use an XML profile (README).
ROS_TRANSPORTS_ENV = ("FASTDDS_BUILTIN_TRANSPORTS", "UDPv4")


def main(args: list[str] | None = None) -> None:
    os.environ.setdefault(*ROS_TRANSPORTS_ENV)
    sys.setswitchinterval(lowcmd_process.GIL_SWITCH_INTERVAL_S)  # (the link reader and the executor)
    run(HwBridge, args)


if __name__ == "__main__":
    main()
