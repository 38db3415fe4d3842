"""MuJoCo's passive viewer on a running simulation: the caller steps the physics and calls ``sync()`` after
each step (https://mujoco.readthedocs.io/en/stable/python.html#passive-viewer). ROS-free."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from g1_teleop.sim.simulator import Simulator

if TYPE_CHECKING:
    import mujoco.viewer


def has_display() -> bool:
    """Whether a window can open: DISPLAY (X11) or WAYLAND_DISPLAY is set."""
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def open_passive_viewer(sim: Simulator) -> mujoco.viewer.Handle | None:
    """A passive viewer on ``sim``'s model and data, or None without a display."""
    if not has_display():
        return None
    import mujoco.viewer  # opens GLFW: only when a window is asked for

    return mujoco.viewer.launch_passive(sim.model, sim.data)
