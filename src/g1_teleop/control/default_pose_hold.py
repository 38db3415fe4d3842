"""The simplest lower-body controller: legs and waist held at the robot's default pose, ROS-free."""

from __future__ import annotations

import numpy as np

from g1_teleop.control.gains import JointGains
from g1_teleop.control.lower_body import LowerBodyTarget
from g1_teleop.control.proprioception import Proprioception
from g1_teleop.core.modes import Mode
from g1_teleop.core.robot_description import Robot


class DefaultPoseHold:
    """Legs and waist at the robot's default pose (joint PD only: it does not balance), mode STAND_HOLD, with
    the robot's default gain profile."""

    mode = Mode.STAND_HOLD
    max_velocity = min_velocity = np.zeros(3)
    walking = False  # no locomotion

    def __init__(self, robot: Robot) -> None:
        lower = robot.group("lower_body")
        self._target = LowerBodyTarget(q=robot.default_q[lower], tau_ff=np.zeros(len(lower)),
                                       gains=JointGains.profile(robot))

    def command_squat(self, height_rate: float, pitch_rate: float, height_m: float | None = None) -> None:
        """No squat: ignored."""

    def command_velocity(self, vx: float, vy: float, wz: float) -> None:
        """No locomotion: ignored."""

    def command_waist(self, q: np.ndarray) -> bool:
        """Not taken: this controller holds the default pose, the waist included."""
        return False

    def request(self, mode: Mode) -> str | None:
        if mode is self.mode:
            return None
        return (f"controller hold has only {self.mode.value}: {mode.value} needs controller:=builtin or openwbt "
                "(SQUAT; LOCOMOTION with a loco_config)")

    def targets(self, state: Proprioception) -> LowerBodyTarget:
        return self._target
