"""Virtual gantry: an elastic band that holds the torso, as a bring-up stand (or Unitree's simulator
band) does.

Joint PD alone does not keep a G1 standing; for arm-only work and bring-up the simulator can hold the
torso's centre of mass at its starting point with a spring-damper. Acting ~0.9 m above the feet, a
horizontal force gives the moment that stops the robot tipping. Position only: a rotational spring on
a light body is explicitly unstable at a 5 ms step. Forces are in the world frame (N).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from g1_teleop.core.settings import check_settings, setting

GANTRY_BODY = "torso_link"


@dataclass(frozen=True)
class GantryConfig:
    """The band's spring and damper."""

    stiffness_n_per_m: float = setting(3000.0, "band stiffness (N/m)", minimum=0.0)
    damping_n_s_per_m: float = setting(300.0, "band damping (N·s/m)", minimum=0.0)

    def __post_init__(self) -> None:
        check_settings(self)


def gantry_force(config: GantryConfig, world_p_anchor: np.ndarray, world_p_com: np.ndarray,
                 world_v_com: np.ndarray) -> np.ndarray:
    """Force (3,) on the held body's centre of mass, pulling it back to the anchor point."""
    return config.stiffness_n_per_m * (world_p_anchor - world_p_com) - config.damping_n_s_per_m * world_v_com
