"""Operating modes published on teleop/mode."""

from __future__ import annotations

import enum


class Mode(str, enum.Enum):
    # Legs and waist held at the default pose by joint PD, arms from the IK. Needs the gantry in
    # simulation: joint PD alone does not balance a G1.
    STAND_HOLD = "STAND_HOLD"
    # Height and pitch from the operator, arms from the IK: the built-in standing controller or OpenWBT's
    # squat policy.
    SQUAT = "SQUAT"
    # OpenWBT's locomotion policy: forward, lateral and yaw velocity from the operator.
    LOCOMOTION = "LOCOMOTION"
