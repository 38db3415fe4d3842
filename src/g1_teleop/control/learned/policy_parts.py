"""Learned policies as the parts of a lower-body controller (g1_teleop.control.squat_locomotion), ROS-free.

:class:`LearnedSquat`: a squat policy (OpenWBT's layout) from a height h (m) and pitch p (rad) command,
integrated from the operator's rates at OpenWBT's rate (full stick: max_cmd / 250 per tick, 0.08 m/s and
0.1 rad/s for OpenWBT's), h ∈ [0.35, 0.75], p ∈ [0, 0.5]. :class:`LearnedWalk`: a locomotion policy of
either layout (OpenWBT's, unitree_rl_gym's legs-only) from (vx, vy, wz), each within ±max_cmd and zeroed
below cmd_clip, with its gait clock (OpenWBT's rests while the command is zero).

Each tick the policy's actions set the joints of action_idx (default_angles + action_scale · action); the
other legs and waist joints hold the configuration's default_angles (rl_gym: arm_waist_target). The gains
are the configuration's kps/kds for all 29 joints. Vectors are in DDS motor order.
"""

from __future__ import annotations

import numpy as np

from g1_teleop.control.gains import JointGains
from g1_teleop.control.learned.gait_clock import gait_clock_for
from g1_teleop.control.learned.inference import PolicyInference
from g1_teleop.control.learned.observations import build_observation
from g1_teleop.control.learned.policy_config import LearnedPolicyConfig, LearnedPolicyConfigError, ObservationLayout
from g1_teleop.control.lower_body import LowerBodyTarget
from g1_teleop.control.proprioception import Proprioception
from g1_teleop.control.squat_command import SquatCommand, SquatCommandLimits
from g1_teleop.core.robot_description import Robot

OPENWBT_TICKS_PER_FULL_COMMAND = 250.0  # OpenWBT adds stick · max_cmd / 250 per tick


class PolicyDrive:
    """One learned policy driving the legs (and waist): observation, inference, targets and gains."""

    def __init__(self, robot: Robot, config: LearnedPolicyConfig) -> None:
        """Raises PolicyFileError, PolicyInferenceError, LearnedPolicyConfigError (each names the file)."""
        self._lower = robot.group("lower_body")
        outside = sorted(set(config.action_idx.tolist()) - set(self._lower.tolist()))
        if outside:
            raise LearnedPolicyConfigError(
                f"{config.source}: action_idx drives {[robot.joint_names[i] for i in outside]}, outside legs and "
                "waist: here the arms follow the IK; give the policy's actions on leg and waist joints only")
        self.config = config
        self.inference = PolicyInference(config)
        self.clock = gait_clock_for(config)
        self.gains = JointGains(config.kps, config.kds)
        self._no_torque = np.zeros(len(self._lower))

    def reset(self) -> None:
        """Recurrent state, last action and gait clock from scratch."""
        self.inference.reset()
        if self.clock is not None:
            self.clock.reset()

    def targets(self, state: Proprioception, command: np.ndarray, stopped: bool = False) -> LowerBodyTarget:
        """One inference on ``command`` (the layout's, in physical units); ``stopped`` rests OpenWBT's gait clock."""
        clock = None if self.clock is None else self.clock.step(stopped)
        obs = build_observation(self.config, state, command, self.inference.last_action, clock)
        q = self.inference.joint_targets(self.inference.act(obs), self.config.default_angles)
        return LowerBodyTarget(q=q[self._lower], tau_ff=self._no_torque, gains=self.gains)


class LearnedSquat:
    """A squat policy as the squat part (``g1_teleop.control.squat_locomotion.SquatPart``)."""

    def __init__(self, robot: Robot, config: LearnedPolicyConfig, *,
                 height_range_m: tuple[float, float] = (0.35, 0.75), pitch_range_rad: tuple[float, float] = (0.0, 0.5),
                 standing: tuple[float, float] = (0.75, 0.0)) -> None:
        """Ranges of the command (m, rad) and the standing command at start and after walking: OpenWBT's."""
        if config.observation is not ObservationLayout.OPENWBT_SQUAT:
            raise LearnedPolicyConfigError(f"{config.source}: a squat policy needs observation openwbt_squat, got "
                                           f"{config.observation.value} (a locomotion policy goes in loco_config)")
        self.drive = PolicyDrive(robot, config)
        self.gains, self.transition_ticks = self.drive.gains, config.transition_ticks
        step = tuple(float(m) / OPENWBT_TICKS_PER_FULL_COMMAND for m in config.max_cmd)
        self._command = SquatCommand(SquatCommandLimits(height_range_m, pitch_range_rad, step, standing))

    @property
    def squat_command(self) -> np.ndarray:
        """(h m, p rad)."""
        return self._command.value

    def command_squat(self, height_rate: float, pitch_rate: float, height_m: float | None = None) -> None:
        self._command.integrate(height_rate, pitch_rate, height_m)

    def command_waist(self, q: np.ndarray) -> bool:
        """The policy drives the waist (its actions, or its configuration's held angles): not taken."""
        return False

    def reset(self) -> None:
        self._command.reset()
        self.drive.reset()

    def targets(self, state: Proprioception) -> LowerBodyTarget:
        return self.drive.targets(state, self.squat_command)


class LearnedWalk:
    """A locomotion policy as the walk part (``g1_teleop.control.squat_locomotion.WalkPart``)."""

    def __init__(self, robot: Robot, config: LearnedPolicyConfig) -> None:
        if config.observation.command_size != 3:
            raise LearnedPolicyConfigError(f"{config.source}: a locomotion policy takes (vx, vy, wz), observation "
                                           f"{config.observation.value} does not (a squat policy goes in "
                                           "squat_config)")
        self.drive = PolicyDrive(robot, config)
        self.gains, self.transition_ticks = self.drive.gains, config.transition_ticks
        self.max_velocity = np.array(config.max_cmd, dtype=float)  # full stick
        self.min_velocity = np.zeros(3) if config.cmd_clip is None else np.array(config.cmd_clip, dtype=float)
        self.command = np.zeros(3)

    def command_velocity(self, vx: float, vy: float, wz: float) -> None:
        """(m/s, m/s, rad/s), clipped to ±max_cmd; components below cmd_clip count as 0."""
        command = np.clip([vx, vy, wz], -self.max_velocity, self.max_velocity)
        command[np.abs(command) < self.min_velocity] = 0.0
        self.command = command

    def stop(self) -> None:
        self.command = np.zeros(3)

    def reset(self) -> None:
        self.stop()
        self.drive.reset()

    def targets(self, state: Proprioception) -> LowerBodyTarget:
        return self.drive.targets(state, self.command, stopped=not np.any(self.command))
