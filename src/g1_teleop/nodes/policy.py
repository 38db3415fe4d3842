"""policy: 50 Hz whole-body command from the robot state, the operator's commands and the IK arm targets.

Subscribes joint_states, imu, teleop/arm_target, joy (sensor_msgs/Joy), cmd_vel (geometry_msgs/Twist)
and teleop/mode_request (std_msgs/String); serves teleop/squat and teleop/locomotion (std_srvs/Trigger:
the response says why a switch is refused). Publishes joint_command (stamped, in lockstep, with the state
it answers; in real time with the tick's time),
teleop/mode (latched, on change) and teleop/trace (sensor_msgs/TimeReference: command stamp → stamp of
the operator sample behind its arm targets).

controller "builtin" (default): the model-based standing and squat controller, no weights (mode SQUAT;
LOCOMOTION is refused: it needs a learned policy). controller "hold": legs and waist at the default pose
(mode STAND_HOLD; needs the simulator's gantry). controller "openwbt": OpenWBT's squat and locomotion
policies (modes SQUAT, LOCOMOTION), policy files from ``policy_dir`` or $G1_TELEOP_POLICY_DIR. Arms
follow the IK, at most ±arm_step_limit_rad per tick; from a LOCOMOTION request until a SQUAT request they
move to the default arm pose instead (``locomotion_arms`` "walking_pose"; "ik" keeps them teleoperated).
Lockstep: one command per joint_states stamp, once the IMU sample and arm target with that stamp are in
(once a first arm target has come, the next ones are waited for at most sync_timeout_s).

Joystick (ROS joy node, Xbox layout by default), for every controller with the mode: SQUAT: left stick
up/down raises/lowers (0.08 m/s at full stick), right stick up/down leans forward/back (0.1 rad/s).
LOCOMOTION: left stick forward/left gives vx/vy, right stick left turns left (±0.3 at full stick); a
fresh cmd_vel overrides the sticks. Button A requests LOCOMOTION, button B SQUAT.
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
from g1_teleop.control.whole_body_target import WholeBodyTargetBuilder
from g1_teleop.core.joint_vector import JointIndex, MalformedJointMessage
from g1_teleop.core.modes import Mode
from g1_teleop.core.robot_description import load_robot
from g1_teleop.ros.diagnostics import Diagnostics, WarnOnce
from g1_teleop.ros.messages import stamp_ns, to_stamp
from g1_teleop.ros.node_main import run
from g1_teleop.ros.parameters import declare_config
from g1_teleop.ros.qos import QOS_COMMAND, QOS_LATCHED, QOS_SENSOR, QOS_STATE

LOCOMOTION_ARMS = ("walking_pose", "ik")


@dataclass(frozen=True)
class PolicyNodeConfig:
    model: str = ""
    robot_config: str = ""
    controller: str = "builtin"  # builtin | hold | openwbt
    policy_dir: str = ""  # openwbt: folder of the policy files ("" → $G1_TELEOP_POLICY_DIR, then the user folder)
    squat_config: str = "g1_squat.yaml"
    loco_config: str = "g1_loco.yaml"
    control_dt: float = 0.02
    lockstep: bool = True
    arm_step_limit_rad: float = 0.01  # per control tick
    arm_target_timeout_s: float = 0.5  # an older arm target is stale: the arms hold
    sync_timeout_s: float = 1.0  # lockstep: wall seconds to wait for a tick's arm target
    state_timeout_s: float = 0.1  # real time: no command from joint_states older than this
    joy_timeout_s: float = 0.5  # older joystick input counts as sticks released
    cmd_vel_timeout_s: float = 0.5
    joy_axes: tuple[int, ...] = (1, 4, 1, 0, 3)  # height, pitch, vx, vy, wz
    joy_buttons: tuple[int, ...] = (0, 1)  # request LOCOMOTION, request SQUAT
    # Arms from the LOCOMOTION request until SQUAT is requested: "walking_pose" (the default arm pose; the
    # IK targets are ignored) or "ik" (teleoperated: a forward reach makes OpenWBT's policy fall, see README).
    locomotion_arms: str = "walking_pose"

    def __post_init__(self) -> None:
        if self.controller not in CONTROLLERS:
            raise ValueError(f"controller must be one of {', '.join(CONTROLLERS)}, got {self.controller!r}")
        if self.locomotion_arms not in LOCOMOTION_ARMS:
            raise ValueError(f"locomotion_arms must be one of {', '.join(LOCOMOTION_ARMS)}, "
                             f"got {self.locomotion_arms!r}")
        for name in ("control_dt", "arm_step_limit_rad", "arm_target_timeout_s", "sync_timeout_s",
                     "state_timeout_s", "joy_timeout_s", "cmd_vel_timeout_s"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be positive, got {getattr(self, name)}")
        if len(self.joy_axes) != 5 or len(self.joy_buttons) != 2:
            raise ValueError("joy_axes needs 5 indices (height, pitch, vx, vy, wz), joy_buttons 2")


@dataclass
class _State:
    """Proprioception of one stamp (q, dq: DDS order; pelvis orientation w,x,y,z; gyro rad/s)."""

    stamp_ns: int
    q: np.ndarray
    dq: np.ndarray
    received_s: float  # monotonic wall time
    world_q_pelvis: np.ndarray | None = None
    pelvis_w_pelvis: np.ndarray | None = None

    @property
    def complete(self) -> bool:
        return self.world_q_pelvis is not None


@dataclass
class _ArmTarget:
    stamp_ns: int
    q: np.ndarray
    tau_ff: np.ndarray
    received_s: float


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
        self.builder = WholeBodyTargetBuilder(robot, self.lower_body, cfg.arm_step_limit_rad)
        self.warn = WarnOnce(self)
        self.state: _State | None = None
        self.imu: tuple[int, np.ndarray, np.ndarray] | None = None  # (stamp, world_q_pelvis, pelvis_w_pelvis)
        self.arm: _ArmTarget | None = None
        self.joy: tuple[float, list[float], list[int]] | None = None
        self.cmd_vel: tuple[float, Twist] | None = None
        self.pending_since: float | None = None  # lockstep: wall time the current state began waiting
        self.last_command: JointState | None = None
        self.commands = 0

        self.pub_command = self.create_publisher(JointState, "joint_command", QOS_COMMAND)
        self.pub_trace = self.create_publisher(TimeReference, "teleop/trace", QOS_COMMAND)
        self.pub_mode = self.create_publisher(String, "teleop/mode", QOS_LATCHED)
        self.create_subscription(JointState, "joint_states", self.on_joint_states, QOS_STATE)
        self.create_subscription(Imu, "imu", self.on_imu, QOS_STATE)
        self.create_subscription(JointState, "teleop/arm_target", self.on_arm_target, QOS_COMMAND)
        self.create_subscription(Joy, "joy", self.on_joy, QOS_SENSOR)
        self.create_subscription(Twist, "cmd_vel", lambda m: setattr(self, "cmd_vel", (time.monotonic(), m)),
                                 QOS_SENSOR)
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
        walking = ("the default pose in LOCOMOTION" if cfg.locomotion_arms == "walking_pose"
                   else "the IK in LOCOMOTION too")
        self.get_logger().info(f"controller {cfg.controller}, mode {self.mode.value}; arms follow the IK "
                               f"(±{cfg.arm_step_limit_rad} rad per tick), {walking}")

    # -- inputs -----------------------------------------------------------------------------------
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
        previous = self.state
        self.state = _State(stamp, vec.position, vec.velocity, time.monotonic())
        if previous is not None and previous.stamp_ns == stamp and previous.complete:
            self.state.world_q_pelvis, self.state.pelvis_w_pelvis = previous.world_q_pelvis, previous.pelvis_w_pelvis
        elif self.imu is not None and (self.imu[0] == stamp or not self.cfg.lockstep):
            self.state.world_q_pelvis, self.state.pelvis_w_pelvis = self.imu[1], self.imu[2]
        if self.cfg.lockstep and (previous is None or previous.stamp_ns != stamp):
            self.pending_since = time.monotonic()
        self.try_lockstep_tick()

    def on_imu(self, msg: Imu) -> None:
        o, w = msg.orientation, msg.angular_velocity
        quat, gyro = np.array([o.w, o.x, o.y, o.z]), np.array([w.x, w.y, w.z])
        if not (np.all(np.isfinite(quat)) and np.all(np.isfinite(gyro))) or abs(np.linalg.norm(quat) - 1) > 1e-3:
            self.warn("imu", "ignored imu: non-finite values or a non-unit orientation quaternion")
            return
        self.imu = (stamp_ns(msg.header.stamp), quat, gyro)
        if self.state is not None and (self.state.stamp_ns == self.imu[0] or not self.cfg.lockstep):
            self.state.world_q_pelvis, self.state.pelvis_w_pelvis = quat, gyro
            self.try_lockstep_tick()

    def on_arm_target(self, msg: JointState) -> None:
        try:
            vec = self.arm_joints.parse(msg.name, msg.position, msg.velocity, msg.effort)
        except MalformedJointMessage as exc:
            self.warn(exc.kind, f"ignored teleop/arm_target: {exc}; the arms keep their last target")
            return
        tau = np.zeros(len(self.arm_joints)) if vec.effort is None else vec.effort
        self.arm = _ArmTarget(stamp_ns(msg.header.stamp), vec.position, tau, time.monotonic())
        self.try_lockstep_tick()

    def on_joy(self, msg: Joy) -> None:
        previous = self.joy[2] if self.joy is not None else []
        self.joy = (time.monotonic(), list(msg.axes), list(msg.buttons))
        for button, mode in zip(self.cfg.joy_buttons, (Mode.LOCOMOTION, Mode.SQUAT), strict=True):
            pressed = button < len(msg.buttons) and msg.buttons[button]
            was = button < len(previous) and previous[button]
            if pressed and not was:
                self.switch(mode, source="joy")

    def on_mode_request(self, msg: String) -> None:
        try:
            mode = Mode(msg.data.strip().upper())
        except ValueError:
            self.get_logger().warning(f"teleop/mode_request {msg.data!r} is not one of {[m.value for m in Mode]}")
            return
        self.switch(mode, source="teleop/mode_request")

    def serve_mode(self, mode: Mode, response: Trigger.Response) -> Trigger.Response:
        reason = self.switch(mode, source="service")
        response.success = reason is None
        response.message = f"{mode.value} requested" if reason is None else reason
        return response

    def switch(self, mode: Mode, source: str) -> str | None:
        """Request a mode; log and return the reason when refused."""
        reason = self.lower_body.request(mode)
        if reason is None:
            self.get_logger().info(f"{mode.value} requested ({source})")
        else:
            self.get_logger().warning(f"{mode.value} refused ({source}): {reason}")
        return reason

    # -- ticks ------------------------------------------------------------------------------------
    def try_lockstep_tick(self) -> None:
        if (self.cfg.lockstep and self.pending_since is not None and self.state.complete
                and self.arm is not None and self.arm.stamp_ns == self.state.stamp_ns):
            self.tick()

    def on_sync_timeout(self) -> None:
        if (self.pending_since is None or not self.state.complete
                or time.monotonic() - self.pending_since <= self.cfg.sync_timeout_s):
            return
        if self.arm is None:  # before the first arm target the graph is still starting: wait (deterministic)
            self.warn("first_arm", f"no teleop/arm_target yet (t = {self.state.stamp_ns / 1e9:.3f} s): is retarget "
                                   "running? Lockstep waits for its first answer")
            return
        self.warn("sync", f"no teleop/arm_target for t = {self.state.stamp_ns / 1e9:.3f} s within "
                          f"{self.cfg.sync_timeout_s} s: is retarget running? Using the latest arm target")
        self.tick()

    def operator_commands(self, now: float) -> None:
        """Sticks (or cmd_vel) → the lower-body controller's commands for this tick."""
        axes = self.joy[1] if self.joy is not None and now - self.joy[0] <= self.cfg.joy_timeout_s else []

        def axis(i: int) -> float:
            value = axes[i] if i < len(axes) else 0.0
            return float(value) if np.isfinite(value) else 0.0

        height, pitch, vx, vy, wz = self.cfg.joy_axes
        self.lower_body.command_squat(axis(height), axis(pitch))
        velocity = np.array([axis(vx), axis(vy), axis(wz)]) * self.lower_body.max_velocity
        if self.cmd_vel is not None and now - self.cmd_vel[0] <= self.cfg.cmd_vel_timeout_s:
            twist = self.cmd_vel[1]
            velocity = np.array([twist.linear.x, twist.linear.y, twist.angular.z])
        self.lower_body.command_velocity(*np.nan_to_num(velocity))

    def walking_pose_applies(self) -> bool:
        """The arms take the walking pose: locomotion_arms "walking_pose" and LOCOMOTION requested."""
        return self.cfg.locomotion_arms == "walking_pose" and self.lower_body.walking

    def tick(self) -> None:
        state, arm, now = self.state, self.arm, time.monotonic()
        if state is None or not state.complete:
            return
        self.pending_since = None
        if not self.cfg.lockstep:
            if now - state.received_s > self.cfg.state_timeout_s:
                self.warn("stale_state", f"joint_states older than {self.cfg.state_timeout_s} s: no command "
                                         "(the bridge holds, then damps)")
                return
            if arm is not None and now - arm.received_s > self.cfg.arm_target_timeout_s:
                self.warn("stale_arm", f"teleop/arm_target older than {self.cfg.arm_target_timeout_s} s: "
                                       "arms hold")
                arm = None
        self.operator_commands(now)
        arm_q, arm_tau = (None, None) if arm is None else (arm.q, arm.tau_ff)
        if self.walking_pose_applies():
            arm_q, arm_tau = self.robot.default_q[self.robot.group("arms")], None
        target = self.builder.step(state, arm_q, arm_tau)
        msg = JointState(name=list(self.robot.joint_names), position=target.q.tolist(),
                         velocity=[0.0] * len(target.q), effort=target.tau_ff.tolist())
        # Lockstep: the stamp of the state it answers (the simulator waits for it). Real time: the tick's time.
        msg.header.stamp = to_stamp(state.stamp_ns) if self.cfg.lockstep else self.get_clock().now().to_msg()
        self.pub_command.publish(msg)
        self.last_command = msg
        self.commands += 1
        mode = self.lower_body.mode
        if mode != self.mode:
            self.mode = mode
            self.pub_mode.publish(String(data=mode.value))
            self.get_logger().info(f"mode {mode.value}")
        if arm is not None:
            trace = TimeReference(time_ref=to_stamp(arm.stamp_ns), source="policy")
            trace.header.stamp, trace.header.frame_id = msg.header.stamp, "joint_command"
            self.pub_trace.publish(trace)


def main(args: list[str] | None = None) -> None:
    run(Policy, args)


if __name__ == "__main__":
    main()
