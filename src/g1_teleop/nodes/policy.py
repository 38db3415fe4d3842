"""policy: 50 Hz whole-body command from the robot state, the operator's commands and the IK arm targets.

Subscribes joint_states, imu, teleop/arm_target, joy (sensor_msgs/Joy), cmd_vel (geometry_msgs/Twist), the
operator's body (std_msgs/Float32: teleop/squat_height m, teleop/heading rad; body_retarget) and
teleop/mode_request (std_msgs/String); serves teleop/squat and teleop/locomotion (std_srvs/Trigger:
the response says why a switch is refused). Publishes joint_command (stamped, in lockstep, with the state
it answers; in real time with the tick's time), teleop/gains (latched: the controller's PD gains for the 29
joints, position = kp, velocity = kd, before the first command and each command whose gains differ; blended
over a mode switch), teleop/mode (latched, on change) and teleop/trace (sensor_msgs/TimeReference: command
stamp → stamp of the operator sample behind its arm targets).

SQUAT: controller "builtin" (model-based, no weights) or "openwbt" (OpenWBT's squat policy, squat_config);
LOCOMOTION: loco_config's policy; "hold": the default pose (STAND_HOLD; needs the gantry). Arms follow the IK
(±arm_step_limit_rad per control period), or the default arm pose from a LOCOMOTION request until SQUAT
(locomotion_arms).
Lockstep: one command per joint_states stamp, once that stamp's IMU sample and arm target are in (at most
sync_timeout_s once a first arm target has come). Real time: a tick every control_dt of the policy's own clock
(control_clock: sim time followed from /clock, or the ROS clock) from the newest state and arm target, taken at the
tick.
Joystick (Xbox layout): SQUAT: sticks raise/lower and lean; LOCOMOTION: vx/vy and turn (a fresh cmd_vel overrides;
a fresh heading turns the robot as the operator turns); A → LOCOMOTION, B → SQUAT. The decisions live in
g1_teleop.control: inputs (policy_inputs, state_checks), ticks (policy_step, control_clock), commands
(whole_body_target, command_contract), modes (mode_requests, operator_commands).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np
from geometry_msgs.msg import Twist
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rosgraph_msgs.msg import Clock as ClockMsg
from sensor_msgs.msg import Imu, JointState, Joy, TimeReference
from std_msgs.msg import Float32, String
from std_srvs.srv import Trigger

from g1_teleop.control.control_clock import ControlClock, ControlClockConfig
from g1_teleop.control.controller_factory import make_lower_body
from g1_teleop.control.policy_inputs import RefusedInput
from g1_teleop.control.policy_settings import PolicyNodeConfig
from g1_teleop.control.policy_step import PolicyStep
from g1_teleop.control.tick_delays import TickDelays
from g1_teleop.control.tick_schedule import TickSchedule
from g1_teleop.control.whole_body_target import WholeBodyTargetBuilder
from g1_teleop.core.dex3_description import load_dex3
from g1_teleop.core.modes import Mode
from g1_teleop.core.realtime_loop import wait_until
from g1_teleop.core.robot_description import load_robot
from g1_teleop.ros.diagnostics import Diagnostics, RateLimitedLog, WarnOnce
from g1_teleop.ros.messages import gains_msg, imu_orientation_wxyz, joint_state_msg, stamp_ns, to_stamp
from g1_teleop.ros.node_main import run
from g1_teleop.ros.parameters import declare_config
from g1_teleop.ros.polled_subscription import LatestInputs
from g1_teleop.ros.qos import QOS_COMMAND, QOS_LATCHED, QOS_SENSOR, QOS_STATE


class Policy(Node):
    def __init__(self) -> None:
        super().__init__("policy")
        cfg = self.cfg = declare_config(self, PolicyNodeConfig)
        robot = self.robot = load_robot(cfg.robot_config or None, cfg.model or None)
        self.lower_body = make_lower_body(robot, cfg.controller, control_dt=cfg.control_dt, policy_dir=cfg.policy_dir,
                                          squat_config=cfg.squat_config, loco_config=cfg.loco_config,
                                          hands=load_dex3() if cfg.dex3 else None)
        self.mode = self.lower_body.mode
        self.builder = WholeBodyTargetBuilder(robot, self.lower_body, cfg.arm_step_limit_rad,
                                              walking_pose=cfg.locomotion_arms == "walking_pose")
        self.step = PolicyStep(self.builder, cfg)
        self.inputs, self.intake = self.step.inputs, self.step.intake
        self.warn, self.log = WarnOnce(self), RateLimitedLog(self.get_logger())
        self.clock = ControlClock(ControlClockConfig(period_s=cfg.control_dt))
        self.schedule = TickSchedule(self.clock, cfg.command_lead_s)
        self.sim_time = bool(self.get_parameter("use_sim_time").value)
        self.last_command: JointState | None = None
        self.commands = 0
        self.tick_delays = TickDelays()  # real time: how late each tick starts, its take and step (diagnostics)

        self.pub_command = self.create_publisher(JointState, "joint_command", QOS_COMMAND)
        self.pub_trace = self.create_publisher(TimeReference, "teleop/trace", QOS_COMMAND)
        self.pub_mode = self.create_publisher(String, "teleop/mode", QOS_LATCHED)
        self.pub_gains = self.create_publisher(JointState, "teleop/gains", QOS_LATCHED)
        # Real time: the newest state and arm target are taken at each tick (g1_teleop.ros.polled_subscription), not
        # every 200 Hz state nor every operator sample (30–90 Hz): nothing wakes the process between its ticks.
        self.tick_inputs = LatestInputs(self, polled=not cfg.lockstep)
        self.tick_inputs.subscribe(JointState, "joint_states", QOS_STATE, self.on_joint_states)
        self.tick_inputs.subscribe(Imu, "imu", QOS_STATE, self.on_imu)
        self.tick_inputs.subscribe(JointState, "teleop/arm_target", QOS_COMMAND, self.on_arm_target)
        self.create_subscription(Joy, "joy", self.on_joy, QOS_SENSOR)
        self.create_subscription(Twist, "cmd_vel", self.on_cmd_vel, QOS_SENSOR)
        for topic, intake in (("squat_height", self.intake.squat_height), ("heading", self.intake.heading)):
            self.create_subscription(Float32, f"teleop/{topic}", lambda msg, intake=intake: self.take(
                intake, msg.data, time.monotonic()), QOS_COMMAND)
        self.create_subscription(String, "teleop/mode_request", self.on_mode_request, QOS_COMMAND)
        for mode in (Mode.SQUAT, Mode.LOCOMOTION):
            self.create_service(Trigger, f"teleop/{mode.value.lower()}",
                                lambda request, response, mode=mode: self.serve_mode(mode, response))
        self.pub_mode.publish(String(data=self.mode.value))
        self.diagnostics = Diagnostics(self, lambda: {
            "mode": self.mode.value, "commands": self.commands, "refused_inputs": dict(self.warn.counts),
            "refused_clock": dict(self.clock.refused), "clock_relocks": self.clock.relocks,
            "skipped_ticks": self.clock.skipped_ticks, **self.tick_delays.values()})
        steady = Clock(clock_type=ClockType.STEADY_TIME)
        if cfg.lockstep:
            self.create_timer(0.05, self.on_sync_timeout, clock=steady)
        else:  # the policy's own clock: a steady timer re-armed for each tick's time
            self.tick_timer = self.create_timer(cfg.control_dt, self.on_tick_timer, clock=steady)
            if self.sim_time:
                self.create_subscription(ClockMsg, "/clock", self.on_clock, QOS_STATE)
        walks = f"LOCOMOTION: {cfg.loco_config or 'default'}" if any(self.lower_body.max_velocity) else "no LOCOMOTION"
        self.get_logger().info(f"controller {cfg.controller} ({walks}), mode {self.mode.value}; arms follow the IK "
                               f"(±{cfg.arm_step_limit_rad} rad per period), locomotion_arms {cfg.locomotion_arms}")

    def now_stamp_ns(self) -> int | None:  # real time: the clock that states' stamps are checked against
        return None if self.cfg.lockstep else self.clock.now_ns(time.monotonic())

    def take(self, intake: Callable[..., None], *fields: Any) -> None:  # refused: counted, warned once per kind
        try:
            intake(*fields)
        except RefusedInput as exc:
            self.warn(exc.kind, str(exc))
            return
        if self.inputs.ready():
            self.tick()

    def on_joint_states(self, msg: JointState, received_s: float) -> None:
        stamp = stamp_ns(msg.header.stamp)
        if self.cfg.lockstep and self.last_command is not None and stamp == stamp_ns(self.last_command.header.stamp):
            self.pub_command.publish(self.last_command)  # the simulator asks again: same answer
            return
        self.take(self.intake.joint_state, msg.name, msg.position, msg.velocity, stamp, received_s,
                  self.now_stamp_ns())

    def on_imu(self, msg: Imu, received_s: float) -> None:
        w = msg.angular_velocity
        self.take(self.intake.imu, imu_orientation_wxyz(msg), np.array([w.x, w.y, w.z]), stamp_ns(msg.header.stamp),
                  received_s, self.now_stamp_ns())

    def on_arm_target(self, msg: JointState, received_s: float) -> None:
        self.take(self.intake.arm_target, msg.name, msg.position, msg.velocity, msg.effort,
                  stamp_ns(msg.header.stamp), received_s)

    def on_clock(self, msg: ClockMsg) -> None:
        relocks = self.clock.relocks
        refused = self.clock.put(stamp_ns(msg.clock), time.monotonic())
        if refused is not None:
            self.warn(f"clock/{refused}", f"/clock {stamp_ns(msg.clock) * 1e-9:.3f} s refused: {refused}")
        elif self.clock.relocks > relocks:
            self.log.warning("clock/relock", f"/clock follows a new timeline from {stamp_ns(msg.clock) * 1e-9:.3f} s "
                                             "(the simulator restarted?): ticks on it from now on")

    def on_joy(self, msg: Joy) -> None:
        for mode in self.intake.joy(msg.axes, msg.buttons, time.monotonic()):
            self.switch(mode, source="joy")

    def on_cmd_vel(self, msg: Twist) -> None:
        self.intake.cmd_vel(msg.linear.x, msg.linear.y, msg.angular.z, time.monotonic())

    def on_mode_request(self, msg: String) -> None:
        try:
            self.switch(self.intake.mode_request(msg.data), source="teleop/mode_request")
        except RefusedInput as exc:
            self.log.warning(exc.kind, str(exc))

    def serve_mode(self, mode: Mode, response: Trigger.Response) -> Trigger.Response:
        reason = self.switch(mode, source="service")
        response.success, response.message = reason is None, reason or f"{mode.value} requested"
        return response

    def switch(self, mode: Mode, source: str) -> str | None:
        """Request a mode; log (rate-limited) and return the reason when refused."""
        reason = self.step.gate.request(mode)
        if reason is None:
            self.log.info("mode_accepted", f"{mode.value} requested ({source})")
        else:
            self.log.warning("mode_refused", f"{mode.value} refused ({source}): {reason}")
        return reason

    def on_sync_timeout(self) -> None:
        due, problem = self.step.sync_timeout(time.monotonic(), self.cfg.sync_timeout_s)
        if problem is not None:
            self.warn(*problem)
        if due:
            self.tick()

    def on_tick_timer(self) -> None:
        now = time.monotonic()
        if not self.sim_time:  # the ROS clock is the source
            self.clock.put(self.get_clock().now().nanoseconds, now)
        plan = self.schedule.plan(now)
        if plan.early and plan.compute_s > now:  # before its computing time: the inputs so far, then wait for it
            self.tick_inputs.poll()
            wait_until(plan.compute_s)
        timing = self.clock.poll(plan.tick_s)
        self.tick_timer.timer_period_ns = round(self.schedule.next_wake_in_s(plan, timing, time.monotonic()) * 1e9)
        self.tick_timer.reset()
        if timing.due:
            start_s = time.monotonic()
            self.tick_inputs.poll()
            taken_s = time.monotonic()
            step_s = self.tick(timing.stamp_ns, write_s=plan.tick_s)
            if plan.ahead_s is not None:
                self.tick_delays.record(start_s - plan.compute_s, taken_s - start_s, step_s,
                                        woke_late=plan.ahead_s <= 0)

    def tick(self, clock_stamp_ns: int | None = None, write_s: float | None = None) -> float:
        """One command: lockstep, stamped with the state it answers; real time, with the tick's clock time, written
        no earlier than ``write_s`` (monotonic s: command_lead_s). Returns the time it took (s) less that wait."""
        start_s = time.monotonic()
        command, problems = self.step(start_s, clock_stamp_ns)
        for kind, message in problems:
            self.warn(kind, message)
        if command is None:
            return time.monotonic() - start_s
        if write_s is not None and (computed_s := time.monotonic()) < write_s:
            start_s += wait_until(write_s) - computed_s
        target, stamp = command.target, to_stamp(command.stamp_ns)
        if target.gains_changed:  # before the command: a bridge applies them from that command on
            self.pub_gains.publish(gains_msg(self.robot.joint_names, stamp, target.gains.kp, target.gains.kd))
        msg = joint_state_msg(self.robot.joint_names, stamp, target.q, target.dq, target.tau_ff)
        self.pub_command.publish(msg)
        self.last_command = msg
        self.commands += 1
        if self.lower_body.mode != self.mode:
            self.mode = self.lower_body.mode
            self.pub_mode.publish(String(data=self.mode.value))
            self.get_logger().info(f"mode {self.mode.value}")
        if command.arm_stamp_ns is not None:
            trace = TimeReference(time_ref=to_stamp(command.arm_stamp_ns), source="policy")
            trace.header.stamp, trace.header.frame_id = msg.header.stamp, "joint_command"
            self.pub_trace.publish(trace)
        return time.monotonic() - start_s


def main(args: list[str] | None = None) -> None:
    run(Policy, args)


if __name__ == "__main__":
    main()
