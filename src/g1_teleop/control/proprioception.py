"""What a controller reads of the robot each control tick: joint positions and velocities, pelvis
orientation and angular velocity. ROS-free."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np


class Proprioception(Protocol):
    """The measured state a controller needs (``g1_teleop.sim.simulator.SimState`` has these fields).

    q, dq: (29,) rad, rad/s in DDS order; world_q_pelvis: (4,) pelvis orientation (w, x, y, z);
    pelvis_w_pelvis: (3,) pelvis angular velocity in the pelvis frame, rad/s.
    """

    q: np.ndarray
    dq: np.ndarray
    world_q_pelvis: np.ndarray
    pelvis_w_pelvis: np.ndarray


@dataclass(frozen=True)
class ProprioceptionSample:
    """A measured :class:`Proprioception`: q, dq (29,) rad, rad/s in DDS order; world_q_pelvis (4,) pelvis
    orientation (w, x, y, z); pelvis_w_pelvis (3,) pelvis angular velocity in the pelvis frame, rad/s."""

    q: np.ndarray
    dq: np.ndarray
    world_q_pelvis: np.ndarray
    pelvis_w_pelvis: np.ndarray
