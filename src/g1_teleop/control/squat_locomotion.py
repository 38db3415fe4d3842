"""A lower-body controller composed of a stand-and-squat part and an optional walking part, with the mode
switches and the blends between them. ROS-free.

SQUAT: the squat part (the built-in standing controller, or a learned squat policy) holds the legs at the
operator's height and pitch command. LOCOMOTION: the walk part (a learned locomotion policy, OpenWBT's or a
legs-only one such as unitree_rl_gym's) walks at the operator's (vx, vy, wz). Without a walk part
LOCOMOTION is refused with the reason.
SQUAT → LOCOMOTION only near standing (command h > 0.72 m, p < 0.05 rad): for the squat part's
``transition_ticks`` it keeps the legs with its command frozen while the gains move to the walk part's, then
the walk part starts. LOCOMOTION → SQUAT only when stopped (|vx|, |vy|, |wz| < 0.1; OpenWBT forgets the
absolute value for vy and wz): both parts run and the targets, torques and gains blend from the walk part's
to the squat part's over the walk part's ``transition_ticks``. Each blend tick moves one step of the way:
the first tick of a switch is the previous mode's, the first tick after it the new mode's. A part is reset
(recurrent state, last action, gait clock; the squat command back to standing) whenever it is
(re)activated. Vectors are in DDS motor order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from g1_teleop.control.gains import JointGains
from g1_teleop.control.lower_body import LowerBodyTarget
from g1_teleop.control.proprioception import Proprioception
from g1_teleop.core.modes import Mode


class SquatPart(Protocol):
    """Stands and squats (mode SQUAT) from a height and pitch command; ``transition_ticks`` (control ticks) it
    keeps the legs before walking starts; ``gains`` those of its targets."""

    transition_ticks: int
    gains: JointGains

    @property
    def squat_command(self) -> np.ndarray:
        """(h m, p rad), the command the part holds."""

    def command_squat(self, height_rate: float, pitch_rate: float, height_m: float | None = None) -> None:
        """Stick values in [-1, 1] for one control tick; a height target ``height_m`` (m) replaces the height stick."""

    def command_waist(self, q: np.ndarray) -> bool:
        """The operator's waist targets (rad); False when the part drives the waist itself."""

    def reset(self) -> None:
        """(Re)activation: the command back to standing, internal state from scratch."""

    def targets(self, state: Proprioception) -> LowerBodyTarget: ...


class WalkPart(Protocol):
    """Walks (mode LOCOMOTION) at ``command`` (vx, vy m/s, wz rad/s); ``max_velocity`` the command at full
    stick, ``min_velocity`` its dead band (smaller components count as 0); ``transition_ticks`` (control ticks) the
    blend back to squatting; ``gains`` those of its targets."""

    transition_ticks: int
    gains: JointGains
    max_velocity: np.ndarray
    min_velocity: np.ndarray
    command: np.ndarray

    def command_velocity(self, vx: float, vy: float, wz: float) -> None: ...

    def stop(self) -> None:
        """Command zero velocity."""

    def reset(self) -> None:
        """(Re)activation: recurrent state, last action and gait clock from scratch, command zero."""

    def targets(self, state: Proprioception) -> LowerBodyTarget: ...


@dataclass(frozen=True)
class SwitchLimits:
    """When mode switches are allowed (OpenWBT's thresholds): the squat command near standing (m, rad) and
    the velocity command stopped (m/s and rad/s, per component)."""

    locoable_height_m: float = 0.72
    locoable_pitch_rad: float = 0.05
    stopped_speed: float = 0.1


class SquatLocomotionController:
    """Lower-body targets from a squat part and an optional walk part (a ``LowerBodyController``)."""

    def __init__(self, squat: SquatPart, walk: WalkPart | None = None, limits: SwitchLimits | None = None) -> None:
        self.squat, self.walk = squat, walk
        self.limits = limits or SwitchLimits()
        self.mode = Mode.SQUAT
        self.max_velocity = np.zeros(3) if walk is None else np.asarray(walk.max_velocity, dtype=float)
        self.min_velocity = np.zeros(3) if walk is None else np.asarray(walk.min_velocity, dtype=float)
        self._transition = 0  # ticks left in the current switch
        self._blending_to: Mode | None = None

    @property
    def transitioning(self) -> bool:
        return self._transition > 0

    @property
    def walking(self) -> bool:
        """From the LOCOMOTION request (its transition included) until the SQUAT request (its blend excluded)."""
        return self._blending_to is Mode.LOCOMOTION or (self.mode is Mode.LOCOMOTION and self._blending_to is None)

    # -- operator commands ------------------------------------------------------------------------
    def command_squat(self, height_rate: float, pitch_rate: float, height_m: float | None = None) -> None:
        """Stick values in [-1, 1] for one control tick, or a height target (m) for the height; ignored outside
        SQUAT and during switches."""
        if self.mode is Mode.SQUAT and not self.transitioning:
            self.squat.command_squat(height_rate, pitch_rate, height_m)

    def command_velocity(self, vx: float, vy: float, wz: float) -> None:
        """Body velocity (m/s, m/s, rad/s) for the walk part; zero outside LOCOMOTION and during switches."""
        if self.walk is None:
            return
        if self.mode is Mode.LOCOMOTION and not self.transitioning:
            self.walk.command_velocity(vx, vy, wz)
        else:
            self.walk.stop()

    def command_waist(self, q: np.ndarray) -> bool:
        """The operator's waist targets (rad) for the squat part in SQUAT; walking and switching keep their own."""
        return self.mode is Mode.SQUAT and not self.transitioning and self.squat.command_waist(q)

    def request(self, mode: Mode) -> str | None:
        """Switch to ``mode``; None when accepted (or already there), else why it is refused."""
        if mode is self.mode and not self.transitioning:
            return None
        if self.transitioning:
            assert self._blending_to is not None  # a switch is under way
            return f"a switch to {self._blending_to.value} is in progress ({self._transition} ticks left)"
        lim = self.limits
        if mode is Mode.LOCOMOTION:
            if self.walk is None:
                return ("no locomotion policy configured: the built-in controller stands and squats only; LOCOMOTION "
                        "needs loco_config (a preset of `g1-teleop policies list`, e.g. "
                        "loco_config:=unitree_rl_gym_g1, or a YAML path)")
            h, p = self.squat.squat_command
            if not (h > lim.locoable_height_m and p < lim.locoable_pitch_rad):
                return (f"stand up first: LOCOMOTION needs height > {lim.locoable_height_m} m and pitch < "
                        f"{lim.locoable_pitch_rad} rad (now {h:.2f} m, {p:.2f} rad)")
            self._begin(Mode.LOCOMOTION, self.squat.transition_ticks)
            return None
        if mode is Mode.SQUAT and self.walk is not None:
            if np.any(np.abs(self.walk.command) >= lim.stopped_speed):
                return f"stop first: SQUAT needs |vx|, |vy|, |wz| < {lim.stopped_speed} (now {self.walk.command})"
            self.walk.stop()
            self.squat.reset()
            self._begin(Mode.SQUAT, self.walk.transition_ticks)
            return None
        modes = "SQUAT" if self.walk is None else "SQUAT, LOCOMOTION"
        return f"{mode.value} is not a mode of this controller ({modes})"

    def _begin(self, mode: Mode, ticks: int) -> None:
        self._transition, self._blending_to = ticks, mode
        if ticks == 0:
            self._arrive()

    def _arrive(self) -> None:
        """The switch is over: the new mode is in charge (the walk part starts from scratch)."""
        assert self._blending_to is not None and self.walk is not None  # a switch, which needs a walk part
        if self._blending_to is Mode.LOCOMOTION:
            self.walk.reset()
        self.mode, self._blending_to = self._blending_to, None

    # -- one control tick -------------------------------------------------------------------------
    def targets(self, state: Proprioception) -> LowerBodyTarget:
        """Leg and waist targets, feed-forward torques and gains for this tick."""
        if self.mode is Mode.LOCOMOTION and self._blending_to is None:
            assert self.walk is not None  # LOCOMOTION needs it
            return self.walk.targets(state)
        if self._blending_to is None:
            return self.squat.targets(state)
        assert self.walk is not None  # switches need it
        if self._blending_to is Mode.LOCOMOTION:  # the squat part keeps the legs, the gains move to walking's
            ticks = self.squat.transition_ticks
            fraction = (ticks - self._transition) / ticks
            held = self.squat.targets(state)
            target = LowerBodyTarget(held.q, held.tau_ff, held.gains.interpolate(self.walk.gains, fraction))
        else:  # walk → squat: both run, everything blends
            ticks = self.walk.transition_ticks
            fraction = (ticks - self._transition) / ticks
            target = self.walk.targets(state).toward(self.squat.targets(state), fraction)
        self._transition -= 1
        if self._transition == 0:
            self._arrive()
        return target
