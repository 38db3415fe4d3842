"""policy: 50 Hz whole-body command from the robot state, the operator's commands and the IK arm targets.

Subscribes joint_states, imu, teleop/arm_target, joy (sensor_msgs/Joy), cmd_vel (geometry_msgs/Twist)
and teleop/mode_request (std_msgs/String); serves teleop/squat and teleop/locomotion (std_srvs/Trigger:
the response says why a switch is refused). Publishes joint_command (stamped, in lockstep, with the state
it answers; in real time with the tick's time), teleop/gains (latched: the controller's PD gains for the 29
joints, position = kp, velocity = kd, before the first command and each command whose gains differ; blended
over a mode switch), teleop/mode (latched, on change) and teleop/trace (sensor_msgs/TimeReference: command
stamp → stamp of the operator sample behind its arm targets).

SQUAT: controller "builtin" (default; model-based, no weights) or "openwbt" (OpenWBT's squat policy,
squat_config). LOCOMOTION: the policy of loco_config (default: OpenWBT's with openwbt, none with builtin).
"hold": the default pose (STAND_HOLD; needs the gantry). Policy files from policy_dir or $G1_TELEOP_POLICY_DIR.
Arms follow the IK, at most ±arm_step_limit_rad per tick; from a LOCOMOTION request until a SQUAT request they
move to the default arm pose instead (``locomotion_arms`` "walking_pose"; "ik" keeps them teleoperated).
Lockstep: one command per joint_states stamp, once the IMU sample and arm target with that stamp are in
(once a first arm target has come, the next ones are waited for at most sync_timeout_s).

Joystick (ROS joy node, Xbox layout by default): SQUAT: left stick up/down raises/lowers (0.08 m/s at full
stick), right stick up/down leans (0.1 rad/s). LOCOMOTION: left stick gives vx/vy, right stick turns (full
stick: the policy's max_cmd); a fresh cmd_vel overrides the sticks. Button A requests LOCOMOTION, B SQUAT.
The decisions live in g1_teleop.control: controller_factory, tick_inputs, operator_commands, whole_body_target.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from geometry_msgs.msg import Twist
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from sensor_msgs.msg import Imu, JointState, Joy, TimeReference
from std_msgs.msg import String
from std_srvs.srv import Trigger

from g1_teleop.control.controller_factory import CONTROLLERS, make_lower_body
from g1_teleop.control.operator_commands import JoystickMapping, JoystickSample, OperatorCommands, VelocityCommand
from g1_teleop.control.tick_inputs import ArmTarget, ImuSample, JointSample, TickInputs
from g1_teleop.control.whole_body_target import WholeBodyTargetBuilder
from g1_teleop.core.joint_vector import JointIndex, MalformedJointMessage
from g1_teleop.core.modes import Mode
from g1_teleop.core.robot_description import load_robot
from g1_teleop.core.settings import check_settings, setting
from g1_teleop.ros.diagnostics import Diagnostics, WarnOnce
from g1_teleop.ros.messages import gains_msg, imu_orientation_wxyz, joint_state_msg, stamp_ns, to_stamp
from g1_teleop.ros.node_main import run
from g1_teleop.ros.parameters import declare_config
from g1_teleop.ros.qos import QOS_COMMAND, QOS_LATCHED, QOS_SENSOR, QOS_STATE


@dataclass(frozen=True)
class PolicyNodeConfig:
    """policy's ROS parameters (read once at start-up)."""

    model: str = setting("", "robot model file (MJCF .xml or URDF); empty: the one robot_config names")
    robot_config: str = setting("", "robot configuration (YAML); empty: config/g1_29dof.yaml")
    controller: str = setting("builtin", "standing and squatting: builtin (model-based, no weights), openwbt "
                              "(OpenWBT's squat policy) or hold (default pose by joint PD; needs the gantry)",
                              choices=CONTROLLERS)
    policy_dir: str = setting("", "folder of the policy files; empty: $G1_TELEOP_POLICY_DIR, then the user data "
                              "folder")
    squat_config: str = setting("", "openwbt: the squat policy's configuration, a preset name or a YAML path "
                                "(relative: in policy_dir); empty: g1_squat.yaml")
    loco_config: str = setting("", "walking (LOCOMOTION): the locomotion policy's configuration, a preset name "
                               "(g1-teleop policies list) or a YAML path (relative: in policy_dir); empty: "
                               "g1_loco.yaml with openwbt, no walking with builtin")
    control_dt: float = setting(0.02, "control period (s): the real-time timer and the builtin controller's rates",
                                positive=True)
    lockstep: bool = setting(True, "one command per joint_states stamp, once that stamp's IMU sample and arm "
                             "target are in; false: a command every control_dt from the newest inputs")
    arm_step_limit_rad: float = setting(0.01, "largest arm target step per control tick (rad)", positive=True)
    arm_target_timeout_s: float = setting(0.5, "real time: an older teleop/arm_target is stale and the arms hold "
                                          "(s)", positive=True)
    sync_timeout_s: float = setting(1.0, "lockstep: wall time to wait for a state's arm target before using the "
                                    "latest one (s)", positive=True)
    state_timeout_s: float = setting(0.1, "real time: no command from joint_states older than this (s)", positive=True)
    joy_timeout_s: float = setting(0.5, "joy input older than this counts as sticks released (s)", positive=True)
    cmd_vel_timeout_s: float = setting(0.5, "cmd_vel older than this is ignored (s)", positive=True)
    joy_axes: tuple[int, ...] = setting((1, 4, 1, 0, 3), "Joy axes: height, pitch, vx, vy, wz", length=5,
                                        minimum=0)
    joy_buttons: tuple[int, ...] = setting((0, 1), "Joy buttons: request LOCOMOTION, request SQUAT", length=2,
                                           minimum=0)
    locomotion_arms: str = setting("walking_pose", "arms from a LOCOMOTION request until SQUAT is requested: "
                                   "walking_pose (the default arm pose, IK targets ignored) or ik (teleoperated: "
                                   "a forward reach makes OpenWBT's policy fall, see README)",
                                   choices=("walking_pose", "ik"))

    def __post_init__(self) -> None:
        check_settings(self)


class Policy(Node):
    def __init__(self) -> None:
        super().__init__("policy")
        cfg = self.cfg = declare_config(self, PolicyNodeConfig)
        robot = self.robot = load_robot(cfg.robot_config or None, cfg.model or None)
        self.joints = JointIndex(robot.joint_names)
        self.arm_joints = JointIndex(robot.group_names("arms"))
        self.lower_body = make_lower_body(robot, cfg.controller, control_dt=cfg.control_dt, policy_dir=cfg.policy_dir,
                                          squat_config=cfg.squat_config, loco_config=cfg.loco_config)
        self.mode = self.lower_body.mode
        self.builder = WholeBodyTargetBuilder(robot, self.lower_body, cfg.arm_step_limit_rad,
                                              walking_pose=cfg.locomotion_arms == "walking_pose")
        self.inputs = TickInputs(cfg.lockstep, cfg.state_timeout_s, cfg.arm_target_timeout_s)
        self.operator = OperatorCommands(JoystickMapping(cfg.joy_axes, cfg.joy_buttons, cfg.joy_timeout_s,
                                                         cfg.cmd_vel_timeout_s))
        self.warn = WarnOnce(self)
        self.last_command: JointState | None = None
        self.commands = 0

        self.pub_command = self.create_publisher(JointState, "joint_command", QOS_COMMAND)
        self.pub_trace = self.create_publisher(TimeReference, "teleop/trace", QOS_COMMAND)
        self.pub_mode = self.create_publisher(String, "teleop/mode", QOS_LATCHED)
        self.pub_gains = self.create_publisher(JointState, "teleop/gains", QOS_LATCHED)
        self.create_subscription(JointState, "joint_states", self.on_joint_states, QOS_STATE)
        self.create_subscription(Imu, "imu", self.on_imu, QOS_STATE)
        self.create_subscription(JointState, "teleop/arm_target", self.on_arm_target, QOS_COMMAND)
        self.create_subscription(Joy, "joy", self.on_joy, QOS_SENSOR)
        self.create_subscription(Twist, "cmd_vel", self.on_cmd_vel, QOS_SENSOR)
        self.create_subscription(String, "teleop/mode_request", self.on_mode_request, QOS_COMMAND)
        for mode in (Mode.SQUAT, Mode.LOCOMOTION):
            self.create_service(Trigger, f"teleop/{mode.value.lower()}",
                                lambda request, response, mode=mode: self.serve_mode(mode, response))
        self.pub_mode.publish(String(data=self.mode.value))
        self.diagnostics = Diagnostics(self, lambda: {"mode": self.mode.value, "commands": self.commands})
        if cfg.lockstep:
            self.create_timer(0.05, self.on_sync_timeout, clock=Clock(clock_type=ClockType.STEADY_TIME))
        else:
            self.create_timer(cfg.control_dt, self.tick)
        walks = f"LOCOMOTION: {cfg.loco_config or 'default'}" if any(self.lower_body.max_velocity) else "no LOCOMOTION"
        self.get_logger().info(f"controller {cfg.controller} ({walks}), mode {self.mode.value}; arms follow the IK "
                               f"(±{cfg.arm_step_limit_rad} rad per tick), locomotion_arms {cfg.locomotion_arms}")

    def on_joint_states(self, msg: JointState) -> None:
        try:
            vec = self.joints.parse(msg.name, msg.position, msg.velocity, need_velocity=True)
        except MalformedJointMessage as exc:
            self.warn(exc.kind, f"ignored joint_states: {exc}")
            return
        stamp = stamp_ns(msg.header.stamp)
        if self.cfg.lockstep and self.last_command is not None and stamp == stamp_ns(self.last_command.header.stamp):
            self.pub_command.publish(self.last_command)  # the simulator asks again: same answer
            return
        self.inputs.put_joints(stamp, JointSample(vec.position, vec.velocity, time.monotonic()))
        self.try_lockstep_tick()

    def on_imu(self, msg: Imu) -> None:
        w = msg.angular_velocity
        quat, gyro = imu_orientation_wxyz(msg), np.array([w.x, w.y, w.z])
        if not (np.all(np.isfinite(quat)) and np.all(np.isfinite(gyro))) or abs(np.linalg.norm(quat) - 1) > 1e-3:
            self.warn("imu", "ignored imu: non-finite values or a non-unit orientation quaternion")
            return
        self.inputs.put_imu(stamp_ns(msg.header.stamp), ImuSample(quat, gyro))
        self.try_lockstep_tick()

    def on_arm_target(self, msg: JointState) -> None:
        try:
            vec = self.arm_joints.parse(msg.name, msg.position, msg.velocity, msg.effort)
        except MalformedJointMessage as exc:
            self.warn(exc.kind, f"ignored teleop/arm_target: {exc}; the arms keep their last target")
            return
        tau = np.zeros(len(self.arm_joints)) if vec.effort is None else vec.effort
        self.inputs.put_arm(ArmTarget(stamp_ns(msg.header.stamp), vec.position, tau, time.monotonic()))
        self.try_lockstep_tick()

    def on_joy(self, msg: Joy) -> None:
        for mode in self.operator.put_joy(JoystickSample(tuple(msg.axes), tuple(msg.buttons), time.monotonic())):
            self.switch(mode, source="joy")

    def on_cmd_vel(self, msg: Twist) -> None:
        self.operator.put_cmd_vel(VelocityCommand((msg.linear.x, msg.linear.y, msg.angular.z), time.monotonic()))

    def on_mode_request(self, msg: String) -> None:
        try:
            mode = Mode(msg.data.strip().upper())
        except ValueError:
            self.get_logger().warning(f"teleop/mode_request {msg.data!r} is not one of {[m.value for m in Mode]}")
            return
        self.switch(mode, source="teleop/mode_request")

    def serve_mode(self, mode: Mode, response: Trigger.Response) -> Trigger.Response:
        reason = self.switch(mode, source="service")
        response.success, response.message = reason is None, reason or f"{mode.value} requested"
        return response

    def switch(self, mode: Mode, source: str) -> str | None:
        """Request a mode; log and return the reason when refused."""
        reason = self.lower_body.request(mode)
        if reason is None:
            self.get_logger().info(f"{mode.value} requested ({source})")
        else:
            self.get_logger().warning(f"{mode.value} refused ({source}): {reason}")
        return reason

    def try_lockstep_tick(self) -> None:
        if self.inputs.ready():
            self.tick()

    def on_sync_timeout(self) -> None:
        if not self.inputs.overdue(time.monotonic(), self.cfg.sync_timeout_s):
            return
        t = self.inputs.stamp_ns / 1e9
        if self.inputs.arm is None:  # before the first arm target the graph is still starting: wait (deterministic)
            self.warn("first_arm", f"no teleop/arm_target yet (t = {t:.3f} s): is retarget running? Lockstep waits "
                                   "for its first answer")
            return
        self.warn("sync", f"no teleop/arm_target for t = {t:.3f} s within {self.cfg.sync_timeout_s} s: is retarget "
                          "running? Using the latest arm target")
        self.tick()

    def tick(self) -> None:
        now = time.monotonic()
        tick = self.inputs.take(now)
        if tick is None:
            return
        if tick.stale_state:
            self.warn("stale_state", f"joint_states older than {self.cfg.state_timeout_s} s: no command (the "
                                     "bridge holds, then damps)")
            return
        if tick.stale_arm:
            self.warn("stale_arm", f"teleop/arm_target older than {self.cfg.arm_target_timeout_s} s: arms hold")
        self.operator.apply(self.lower_body, now)
        arm = tick.arm
        target = self.builder.step(tick.state, None if arm is None else arm.q, None if arm is None else arm.tau_ff)
        # Lockstep: the stamp of the state it answers (the simulator waits for it). Real time: the tick's time.
        stamp = to_stamp(tick.stamp_ns) if self.cfg.lockstep else self.get_clock().now().to_msg()
        if target.gains_changed:  # before the command: a bridge applies them from that command on
            self.pub_gains.publish(gains_msg(self.robot.joint_names, stamp, target.gains.kp, target.gains.kd))
        msg = joint_state_msg(self.robot.joint_names, stamp, target.q, np.zeros(len(target.q)), target.tau_ff)
        self.pub_command.publish(msg)
        self.last_command = msg
        self.commands += 1
        if self.lower_body.mode != self.mode:
            self.mode = self.lower_body.mode
            self.pub_mode.publish(String(data=self.mode.value))
            self.get_logger().info(f"mode {self.mode.value}")
        if arm is not None:
            trace = TimeReference(time_ref=to_stamp(arm.stamp_ns), source="policy")
            trace.header.stamp, trace.header.frame_id = msg.header.stamp, "joint_command"
            self.pub_trace.publish(trace)


def main(args: list[str] | None = None) -> None:
    run(Policy, args)


if __name__ == "__main__":
    main()
