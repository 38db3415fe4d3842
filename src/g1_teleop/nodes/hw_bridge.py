"""hw_bridge: a G1 (or the virtual robot) over Unitree's own DDS interface, behind the ROS topic contract.

Two processes: this one is the ROS side; :mod:`g1_teleop.hardware.lowcmd_process` owns the robot's DDS, runs the
safety state machine (:mod:`~g1_teleop.hardware.bridge_safety`: gains, command loss, faults) and writes rt/lowcmd,
so that nothing rclpy does (a publish can block with the GIL held) can stop the LowCmd loop. This side turns
joint_command (with the gains in force from teleop/gains) into commands for that process, publishes what it
reports (joint_states, imu, the wireless remote's joy, diagnostics), serves hw_bridge/start|activate|estop, takes a
Joy device's ``joy_*_button`` presses and counts joint_command's publishers every 20 ms (none left: a policy that
exited damps without waiting for the grace). With ``dex3``, the hands' topics (:mod:`g1_teleop.ros.dex3_topics`).
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import time
from collections.abc import Callable

import rclpy.logging
from diagnostic_msgs.msg import DiagnosticStatus
from rclpy.impl.rcutils_logger import RcutilsLogger
from rclpy.node import Node
from sensor_msgs.msg import Imu, JointState, Joy
from std_srvs.srv import Trigger

from g1_teleop.core.gains_in_force import GainsInForce
from g1_teleop.core.joint_vector import JointIndex, MalformedJointMessage
from g1_teleop.hardware import bridge_link as msg
from g1_teleop.hardware.bridge_config import HwBridgeConfig, load_bridge_robot, load_setup
from g1_teleop.hardware.bridge_safety import (
    BridgeSafetyConfig,
    CommandLate,
    CommandRejected,
    CommandSample,
    OperatorAction,
    OperatorEvent,
    SafetyState,
    WritingResumed,
    WritingStopped,
)
from g1_teleop.hardware.joy_buttons import JoyButtons
from g1_teleop.hardware.lowcmd_process import GIL_SWITCH_INTERVAL_S, LowCmdProcess, StartError
from g1_teleop.ros.dex3_topics import HandTopics
from g1_teleop.ros.diagnostics import Diagnostics, ProcessFigures, WarnOnce
from g1_teleop.ros.gains_topic import take_gains
from g1_teleop.ros.messages import REMOTE_FRAME, command_from_joint_state, imu_msg, joint_state_msg, remote_joy_msg
from g1_teleop.ros.node_main import run
from g1_teleop.ros.parameters import ConfigError, declare_config
from g1_teleop.ros.qos import QOS_COMMAND, QOS_LATCHED, QOS_SENSOR, QOS_STATE

SERVICE_TIMEOUT_S = 2.0  # a service's wait for the LowCmd loop's answer (0.5 s was exceeded once, a node starting)
EXIT_TIMEOUT_S = 1.0  # on shutdown, the wait for the LowCmd process to damp and exit
# The LowCmd process's reports handled and joint_command's publishers counted (a graph query: ~20 µs) this often.
PERIOD_S = 0.02


class HwBridge(Node):
    def __init__(self) -> None:
        super().__init__("hw_bridge")
        cfg = self.cfg = declare_config(self, HwBridgeConfig)
        try:
            setup = load_setup(cfg, declare_config(self, BridgeSafetyConfig))
        except ValueError as exc:
            raise ConfigError(f"invalid parameters for hw_bridge: {exc}") from None
        robot = self.robot = load_bridge_robot(cfg)
        self.gains = GainsInForce(cfg.gain_profile, *robot.gains(cfg.gain_profile))
        self.joint_names, self.index = list(robot.joint_names), JointIndex(robot.joint_names)
        self.joy_buttons = JoyButtons(cfg.joy_buttons())
        self.warn = WarnOnce(self)
        self.state = SafetyState.WAIT_FOR_STATE
        self.counts = {"commands_received": 0, "commands_rejected": 0, "commands_late": 0}
        self._command_publishers = -1  # joint_command's publishers, last counted
        self.figures = ProcessFigures("joint_command")  # this process's CPU, the longest wait between commands
        self._inbox: list[object] = []  # from the link's reader to the period's timer (list.append is atomic)
        self._figures: dict[str, object] = {}  # the LowCmd process's latest
        self.hands: HandTopics | None = None
        self.pub_joints = self.create_publisher(JointState, "joint_states", QOS_STATE)
        self.pub_imu = self.create_publisher(Imu, "imu", QOS_STATE)
        self.pub_joy = self.create_publisher(Joy, "joy", QOS_SENSOR)
        try:
            self.lowcmd = LowCmdProcess(setup, self.on_message)
        except StartError as exc:
            raise ConfigError(str(exc)) from None
        self.diagnostics = Diagnostics(self, self.diagnostic_values)
        self.report(SafetyState.WAIT_FOR_STATE, "waiting for rt/lowstate")
        # Before joint_command's: rclpy's SingleThreadedExecutor serves ready subscriptions in creation order, its
        # EventsExecutor in order of arrival; the policy publishes a tick's gains before its command.
        self.create_subscription(JointState, "teleop/gains", self.on_gains, QOS_LATCHED)
        self.create_subscription(JointState, "joint_command", self.on_command, QOS_COMMAND)
        self.create_timer(PERIOD_S, self.on_period)
        if self.joy_buttons.buttons:  # (it also hears this node's own joy: a cost worth paying only when used)
            self.create_subscription(Joy, "joy", self.on_joy, QOS_SENSOR)
        for action in OperatorAction:
            self.create_service(Trigger, f"hw_bridge/{action.value}", functools.partial(self.on_service, action))
        if setup.dex3 is not None:
            self.hands = HandTopics(self, setup.dex3, self.lowcmd.send, self.warn)
        self.get_logger().info(
            f"robot DDS domain {cfg.robot_domain_id} on {cfg.network_interface}: waiting for rt/lowstate; LowCmd at "
            f"{cfg.lowcmd_rate_hz:g} Hz from process {self.lowcmd.pid}; operator: remote {cfg.start_combo} / "
            f"{cfg.activate_combo} / {cfg.estop_combo} (start / activate / e-stop), services hw_bridge/start|activate|"
            "estop" + (f"; Dex3 hands at {cfg.dex3_rate_hz:g} Hz" if self.hands else ""))

    def on_message(self, message: object) -> None:
        """(The link's reader thread.) States are published at once; the rest waits for the period's timer."""
        if isinstance(message, msg.RobotState):
            self.publish_guarded(self.publish_state, message)
        elif isinstance(message, msg.HandState) and self.hands is not None:
            self.publish_guarded(self.hands.publish, message)
        else:
            self._inbox.append(message)

    def publish_guarded(self, publish: Callable[..., None], message: object) -> None:
        """``publish(message)``, unless a signal shuts ROS down meanwhile (the LowCmd process stops next)."""
        try:
            publish(message)
        except Exception:
            if self.context.ok():
                raise

    def publish_state(self, state: msg.RobotState) -> None:
        stamp = self.get_clock().now().to_msg()
        if state.imu is not None:
            self.pub_joints.publish(joint_state_msg(self.joint_names, stamp, state.q, state.dq, state.tau))
            imu = state.imu
            self.pub_imu.publish(imu_msg(stamp, imu["quaternion"], imu["gyroscope"], imu["accelerometer"]))
        if state.remote is not None:
            self.pub_joy.publish(remote_joy_msg(state.remote, stamp))

    def on_period(self) -> None:
        """Every PERIOD_S: what the LowCmd process reported (figures, problems, safety transitions), then
        joint_command's publisher count."""
        while self._inbox:
            self.handle_message(self._inbox.pop(0))
        self.count_command_publishers()

    def handle_message(self, message: object, logger: RcutilsLogger | None = None) -> None:
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
                if transition.current is SafetyState.DAMP:  # (rclpy: one severity per call site)
                    logger.warning(f"safety: {transition}")
                else:
                    logger.info(f"safety: {transition}")
                self.report(transition.current, str(transition))
            for notice in message.notices:
                if isinstance(notice, CommandRejected):
                    self.warn("bridge_rejected", str(notice))
                elif isinstance(notice, CommandLate):
                    self.counts["commands_late"] += 1
                    self.warn("command_late", f"{notice} (counted in commands_late; logged once)")
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
        values = {**self._figures, "state": self.state.value, **self.counts, "link_dropped": self.lowcmd.dropped,
                  "gains": self.gains.source, "gains_refused": self.gains.refused}
        if self.hands is not None:
            values.update(self.hands.counts)
        return {**values, **self.figures.values()}

    def on_service(self, action: OperatorAction, _: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        answer = self.lowcmd.request(OperatorEvent(action, "service"), SERVICE_TIMEOUT_S)
        response.success, response.message = (answer.success, answer.message) if answer else \
            (False, f"the LowCmd loop did not answer within {SERVICE_TIMEOUT_S:g} s")
        return response

    def count_command_publishers(self) -> None:
        """Tell the LowCmd loop when joint_command's publisher count changes: none left (a policy that exited or whose
        process the graph stopped) damps once a command is late, without waiting for the grace."""
        count = self.count_publishers("joint_command")
        if count != self._command_publishers:
            self._command_publishers = count
            self.lowcmd.send(msg.CommandPublishers(count))

    def on_joy(self, joy: Joy) -> None:
        if joy.header.frame_id != REMOTE_FRAME:  # (not this node's own)
            for event in self.joy_buttons.presses(joy.buttons, self.warn):
                self.lowcmd.send(msg.Request(event))

    def on_gains(self, gains_msg: JointState) -> None:
        take_gains(gains_msg, self.gains, self.index, self.robot.gain_limits, time.monotonic(), self.warn,
                   self.get_logger(), f"gain profile '{self.cfg.gain_profile}' (applied in ACTIVE)")

    def on_command(self, command_msg: JointState) -> None:
        received_s = time.monotonic()
        try:
            command = command_from_joint_state(command_msg, self.index, self.gains.kp, self.gains.kd)
        except MalformedJointMessage as exc:
            self.counts["commands_rejected"] += 1
            self.warn(exc.kind, f"rejected joint_command: {exc}; it does not reach the robot")
            return
        self.figures.event(received_s)
        self.lowcmd.send(CommandSample(received_s, command))
        self.counts["commands_received"] += 1

    def destroy_node(self) -> None:
        """Stop the LowCmd process (it damps for 50 ms and exits), log what it reported, then the ROS side."""
        if hasattr(self, "lowcmd"):  # (not if it failed to start: rclpy destroys the nodes of its context)
            self.lowcmd.stop(EXIT_TIMEOUT_S)
        logger = rclpy.logging.get_logger(f"{self.get_name()}.shutdown")  # ROS may be down: console only
        while self._inbox:  # the shutdown damping: the executor no longer runs
            message = self._inbox.pop(0)
            if isinstance(message, msg.Report):
                with contextlib.suppress(Exception):
                    self.handle_message(message, logger)
        super().destroy_node()


# A dying subscriber can block a Fast DDS shared-memory publish for ~1 s with the GIL held (UDP only: 9 ms; `g1-teleop
# bench publish`). So this node sends over UDP only, unless told otherwise (Fast DDS >= 2.13; Humble: XML profile).
ROS_TRANSPORTS_ENV = ("FASTDDS_BUILTIN_TRANSPORTS", "UDPv4")


def main(args: list[str] | None = None) -> None:
    os.environ.setdefault(*ROS_TRANSPORTS_ENV)
    sys.setswitchinterval(GIL_SWITCH_INTERVAL_S)  # (the link reader and the executor)
    run(HwBridge, args)


if __name__ == "__main__":
    main()
