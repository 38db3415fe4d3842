"""Operating modes published on teleop/mode."""

from __future__ import annotations

import enum


class Mode(str, enum.Enum):
    # Legs and waist held at the default pose by joint PD, arms from the IK. Needs the gantry in
    # simulation (joint PD alone does not balance a G1); the squat/locomotion policies replace it.
    STAND_HOLD = "STAND_HOLD"
