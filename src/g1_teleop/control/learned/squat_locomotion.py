"""Squat and locomotion with two learned policies (OpenWBT's), the operator's commands, the mode switches
and the blends between them. ROS-free.

SQUAT: the squat policy drives the legs from a height h (m) and pitch p (rad) command, integrated from
the operator's rates at OpenWBT's rate (full stick: 0.08 m/s, 0.1 rad/s), h ∈ [0.35, 0.75], p ∈ [0, 0.5].
LOCOMOTION: the locomotion policy drives the legs from (vx, vy, wz), each within ±max_cmd and zeroed
below cmd_clip, with its gait clock (stopped when the command is zero).
SQUAT → LOCOMOTION only near standing (h > 0.72, p < 0.05): for ``transition_ticks`` the squat policy
keeps the legs with its command frozen, then the locomotion policy starts. LOCOMOTION → SQUAT only when
stopped (|vx|, |vy|, |wz| < 0.1; OpenWBT forgets the absolute value for vy and wz): both policies run
and the target blends from locomotion to squat over ``transition_ticks``. Unlike OpenWBT, a policy's
recurrent state, last action and gait clock are reset whenever it is (re)activated.
The waist holds its default angle. Vectors are in DDS motor order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from g1_teleop.control.learned.gait_clock import gait_clock_for
from g1_teleop.control.learned.inference import PolicyInference
from g1_teleop.control.learned.observations import build_observation
from g1_teleop.control.learned.policy_config import LearnedPolicyConfig, ObservationLayout
from g1_teleop.control.lower_body import LowerBodyTarget
from g1_teleop.control.proprioception import Proprioception
from g1_teleop.control.squat_command import SquatCommand, SquatCommandLimits
from g1_teleop.core.modes import Mode
from g1_teleop.core.robot_description import Robot


@dataclass(frozen=True)
class SwitchLimits:
    """When mode switches are allowed (OpenWBT's thresholds) and the squat command range."""

    locoable_height_m: float = 0.72
    locoable_pitch_rad: float = 0.05
    stopped_speed: float = 0.1  # m/s and rad/s, per component
    height_range_m: tuple[float, float] = (0.35, 0.75)
    pitch_range_rad: tuple[float, float] = (0.0, 0.5)
    standing: tuple[float, float] = (0.75, 0.0)  # squat command at start and after locomotion


class SquatLocomotionController:
    """Lower-body targets from the squat and locomotion policies (a ``LowerBodyController``)."""

    def __init__(self, robot: Robot, squat: LearnedPolicyConfig, loco: LearnedPolicyConfig,
                 limits: SwitchLimits | None = None) -> None:
        """``robot`` names the joint groups; the policies' joint vectors are in its (DDS) order."""
        if squat.observation is not ObservationLayout.OPENWBT_SQUAT:
            raise ValueError(f"{squat.source}: expected an OpenWBT squat policy, got {squat.observation.value}")
        if loco.observation.command_size != 3:
            raise ValueError(f"{loco.source}: expected a locomotion policy (vx, vy, wz), got {loco.observation.value}")
        self.squat_config, self.loco_config = squat, loco
        self._legs, self._waist_joints = robot.group("legs"), robot.group("waist")
        self._lower = robot.group("lower_body")  # legs and waist: the order of the targets
        self.limits = limits or SwitchLimits()
        self.squat_policy, self.loco_policy = PolicyInference(squat), PolicyInference(loco)
        self.clock = gait_clock_for(loco)
        self.mode = Mode.SQUAT
        # OpenWBT adds stick · max_cmd / 250 per tick: 0.08 m/s and 0.1 rad/s at 50 Hz for max_cmd (0.4, 0.5).
        self._squat = SquatCommand(SquatCommandLimits(
            self.limits.height_range_m, self.limits.pitch_range_rad,
            tuple(float(m) / 250.0 for m in squat.max_cmd), self.limits.standing))
        self.max_velocity = np.asarray(loco.max_cmd, dtype=float)  # full stick in LOCOMOTION
        self.loco_command = np.zeros(3)
        self._transition = 0  # ticks left in the current blend
        self._blending_to: Mode | None = None
        self._squat_target = np.array(squat.default_angles, dtype=float)
        self._loco_target = np.array(loco.default_angles, dtype=float)
        self._waist_q = np.array(squat.default_angles[self._waist_joints], dtype=float)  # held

    @property
    def squat_command(self) -> np.ndarray:
        """(h m, p rad), the squat command."""
        return self._squat.value

    @property
    def transitioning(self) -> bool:
        return self._transition > 0

    @property
    def walking(self) -> bool:
        """From the LOCOMOTION request (its transition included) until the SQUAT request (its blend excluded)."""
        return self._blending_to is Mode.LOCOMOTION or (self.mode is Mode.LOCOMOTION and self._blending_to is None)

    # -- operator commands ------------------------------------------------------------------------
    def command_squat(self, height_rate: float, pitch_rate: float) -> None:
        """Stick values in [-1, 1] for one control tick; ignored outside SQUAT and during blends."""
        if self.mode is not Mode.SQUAT or self.transitioning:
            return
        self._squat.integrate(height_rate, pitch_rate)

    def command_velocity(self, vx: float, vy: float, wz: float) -> None:
        """Body velocity (m/s, m/s, rad/s), clipped to ±max_cmd; components below cmd_clip count as 0."""
        if self.mode is not Mode.LOCOMOTION or self.transitioning:
            self.loco_command[:] = 0.0
            return
        max_cmd = np.asarray(self.loco_config.max_cmd, dtype=float)
        command = np.clip([vx, vy, wz], -max_cmd, max_cmd)
        clip = np.asarray(self.loco_config.cmd_clip if self.loco_config.cmd_clip is not None else np.zeros(3))
        command[np.abs(command) < clip] = 0.0
        self.loco_command = command

    def request(self, mode: Mode) -> str | None:
        """Switch to ``mode``; None when accepted (or already there), else why it is refused."""
        if mode is self.mode and not self.transitioning:
            return None
        if self.transitioning:
            return f"a {self.mode.value} transition is in progress ({self._transition} ticks left)"
        lim = self.limits
        if mode is Mode.LOCOMOTION:
            h, p = self.squat_command
            if not (h > lim.locoable_height_m and p < lim.locoable_pitch_rad):
                return (f"stand up first: LOCOMOTION needs height > {lim.locoable_height_m} m and pitch < "
                        f"{lim.locoable_pitch_rad} rad (now {h:.2f} m, {p:.2f} rad)")
            self._transition = self.squat_config.transition_ticks  # squat keeps the legs, then loco
            self._blending_to = Mode.LOCOMOTION
            return None
        if mode is Mode.SQUAT:
            if np.any(np.abs(self.loco_command) >= lim.stopped_speed):
                return f"stop first: SQUAT needs |vx|, |vy|, |wz| < {lim.stopped_speed} (now {self.loco_command})"
            self._squat.reset()
            self.squat_policy.reset()
            self._squat_target = self._loco_target.copy()
            self.loco_command[:] = 0.0
            self._transition = self.loco_config.transition_ticks  # blend loco → squat
            self._blending_to = Mode.SQUAT
            return None
        return f"{mode.value} is not a mode of this controller (SQUAT, LOCOMOTION)"

    # -- one control tick -------------------------------------------------------------------------
    def targets(self, state: Proprioception) -> LowerBodyTarget:
        """Leg and waist targets (15,) rad for this tick (no feed-forward torques: the policies have none)."""
        if self._blending_to is Mode.SQUAT:
            legs = self._blend_loco_to_squat(state)
        elif self.mode is Mode.SQUAT:
            legs = self._squat_step(state)
            if self._blending_to is Mode.LOCOMOTION:  # the squat policy holds, command frozen
                self._transition -= 1
                if self._transition == 0:
                    self._start_locomotion()
        else:
            legs = self._loco_step(state)
        q = np.zeros(len(self.squat_config.default_angles))
        q[self._legs], q[self._waist_joints] = legs, self._waist_q
        return LowerBodyTarget(q=q[self._lower], tau_ff=np.zeros(len(self._lower)))

    def _squat_step(self, state: Proprioception) -> np.ndarray:
        obs = build_observation(self.squat_config, state, self.squat_command, self.squat_policy.last_action)
        self._squat_target = self.squat_policy.joint_targets(self.squat_policy.act(obs), self._squat_target)
        return self._squat_target[self._legs]

    def _loco_step(self, state: Proprioception) -> np.ndarray:
        stopped = not np.any(self.loco_command)
        clock = None if self.clock is None else self.clock.step(stopped)
        obs = build_observation(self.loco_config, state, self.loco_command, self.loco_policy.last_action, clock)
        self._loco_target = self.loco_policy.joint_targets(self.loco_policy.act(obs), self._loco_target)
        return self._loco_target[self._legs]

    def _start_locomotion(self) -> None:
        self.loco_policy.reset()
        if self.clock is not None:
            self.clock.reset()
        self.loco_command[:] = 0.0
        self._loco_target = self._squat_target.copy()
        self.mode, self._blending_to = Mode.LOCOMOTION, None

    def _blend_loco_to_squat(self, state: Proprioception) -> np.ndarray:
        """α·loco + (1 − α)·squat with α from 1 down to 1/transition_ticks (the loco command frozen at 0)."""
        alpha = self._transition / self.loco_config.transition_ticks
        squat_legs = self._squat_step(state)
        loco_legs = self._loco_step(state)
        self._transition -= 1
        if self._transition == 0:
            self.mode, self._blending_to = Mode.SQUAT, None
        return alpha * loco_legs + (1.0 - alpha) * squat_legs
