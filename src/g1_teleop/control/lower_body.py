"""The contract between a lower-body controller (legs and waist) and the whole-body target that consumes
it, ROS-free. Vectors are in DDS motor order."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from g1_teleop.control.gains import JointGains
from g1_teleop.control.proprioception import Proprioception
from g1_teleop.core.modes import Mode


@dataclass(frozen=True)
class LowerBodyTarget:
    """Legs and waist (the robot's ``lower_body`` group): position targets q (15,) rad and feed-forward
    torques tau_ff (15,) N·m, in the group's order; and the PD gains the controller wants with them for every
    joint of the robot (29, DDS order): its own for legs and waist, for the arms those its configuration
    gives or the robot's default profile."""

    q: np.ndarray
    tau_ff: np.ndarray
    gains: JointGains

    def toward(self, end: LowerBodyTarget, fraction: float) -> LowerBodyTarget:
        """Targets, torques and gains ``fraction`` (0 → this, 1 → ``end``) of the way to ``end``: a mode
        switch's blend."""
        return LowerBodyTarget(q=self.q + fraction * (end.q - self.q),
                               tau_ff=self.tau_ff + fraction * (end.tau_ff - self.tau_ff),
                               gains=self.gains.interpolate(end.gains, fraction))


class LowerBodyController(Protocol):
    """Legs and waist for one control tick, from the operator's commands and the measured state.

    ``mode`` is the current mode; ``max_velocity`` the (vx, vy, wz) of a full stick in LOCOMOTION (zeros
    without locomotion), ``min_velocity`` the smallest it acts on (its dead band; zeros: none); ``walking`` True
    from a LOCOMOTION request until the SQUAT request. Commands are given once per tick before ``targets``:
    ``command_squat`` stick values in [-1, 1] for height and pitch (or a height target in m, from the operator's
    body, which the height follows at the full-stick rate),
    ``command_velocity`` m/s, m/s, rad/s, ``command_waist`` (when the operator's body drives the waist) rad.
    """

    mode: Mode
    max_velocity: np.ndarray
    min_velocity: np.ndarray

    @property
    def walking(self) -> bool: ...

    def command_squat(self, height_rate: float, pitch_rate: float, height_m: float | None = None) -> None: ...

    def command_velocity(self, vx: float, vy: float, wz: float) -> None: ...

    def command_waist(self, q: np.ndarray) -> bool:
        """The operator's waist targets (3,) rad, ``waist`` group order, for this tick, within the controller's own
        limits; False when the controller drives the waist itself (a learned policy, walking) and ignores them."""

    def request(self, mode: Mode) -> str | None:
        """Switch to ``mode``: None when accepted (or already there), else why it is refused."""

    def targets(self, state: Proprioception) -> LowerBodyTarget: ...
