"""Gamepad (sensor_msgs/Joy) → Cartesian velocity of each hand, for operators without a headset. ROS-free.

Default layout: the ROS ``joy`` node with an Xbox-style pad. Left stick drives the left hand, right stick
the right hand, in the pelvis frame: stick forward → +x (forward), stick left → +y (left); holding the
side's shoulder button turns the stick's forward axis into +z (up). Orientation is held.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from g1_teleop.core.settings import check_settings, setting
from g1_teleop.retarget.arm_ik import DualArmIK


@dataclass(frozen=True)
class GamepadMapping:
    """Which Joy axes and buttons move the hands, the hands' speed at full stick and the sticks' dead zone."""

    left_forward_axis: int = setting(1, "Joy axis moving the left hand forward", minimum=0)
    left_side_axis: int = setting(0, "Joy axis moving the left hand to the left", minimum=0)
    left_up_button: int = setting(4, "Joy button that, held, turns the left forward axis into up", minimum=0)
    right_forward_axis: int = setting(4, "Joy axis moving the right hand forward", minimum=0)
    right_side_axis: int = setting(3, "Joy axis moving the right hand to the left", minimum=0)
    right_up_button: int = setting(5, "Joy button that, held, turns the right forward axis into up", minimum=0)
    speed_m_s: float = setting(0.15, "hand speed at full stick (m/s)", positive=True, maximum=1.0)
    deadzone: float = setting(0.1, "stick dead zone, a fraction of full stick, below 1", minimum=0.0, maximum=1.0)

    def __post_init__(self) -> None:
        check_settings(self)
        if self.deadzone >= 1.0:
            raise ValueError(f"deadzone must be below 1, got {self.deadzone}")


def _stick(axes: Sequence[float], index: int, deadzone: float) -> float:
    """Axis value in [-1, 1] with the dead zone removed and the rest rescaled to the full range."""
    value = float(axes[index]) if index < len(axes) else 0.0
    if not np.isfinite(value) or abs(value) <= deadzone:
        return 0.0
    return float(np.clip(np.sign(value) * (abs(value) - deadzone) / (1.0 - deadzone), -1.0, 1.0))


def hand_twists(
    mapping: GamepadMapping, axes: Sequence[float], buttons: Sequence[int]
) -> tuple[np.ndarray, np.ndarray]:
    """(left, right) twists (6,): linear velocity (m/s) in pelvis axes, then zero angular velocity."""
    twists = []
    for forward_axis, side_axis, up_button in (
        (mapping.left_forward_axis, mapping.left_side_axis, mapping.left_up_button),
        (mapping.right_forward_axis, mapping.right_side_axis, mapping.right_up_button),
    ):
        forward = _stick(axes, forward_axis, mapping.deadzone)
        side = _stick(axes, side_axis, mapping.deadzone)
        up_held = up_button < len(buttons) and bool(buttons[up_button])
        velocity = np.array([0.0 if up_held else forward, side, forward if up_held else 0.0]) * mapping.speed_m_s
        twists.append(np.concatenate([velocity, np.zeros(3)]))
    return twists[0], twists[1]


class GamepadArmTeleop:
    """Arm joints from gamepad hand velocities, without drift.

    Each hand's commanded velocity is integrated into a Cartesian target (pelvis frame); the arms follow
    it by damped least squares with velocity feed-forward plus a proportional term on the remaining pose
    error (``gain_per_s``), so damping near singularities slows the hand instead of bending its path.
    The target stays within ``max_lead_m`` of the hand, so a hand held at a joint limit or at the edge of
    the workspace does not wind up. Orientation is held with ``rotation_weight`` (it yields first where
    the arm cannot hold it while translating) and no joint moves faster than ``max_joint_speed`` rad/s.
    """

    def __init__(self, ik: DualArmIK, mapping: GamepadMapping, damping: float = 0.05, gain_per_s: float = 5.0,
                 max_lead_m: float = 0.05, rotation_weight: float = 0.3, max_joint_speed: float = 2.0) -> None:
        for name, value in (("damping", damping), ("gain_per_s", gain_per_s), ("max_lead_m", max_lead_m),
                            ("rotation_weight", rotation_weight), ("max_joint_speed", max_joint_speed)):
            if not value > 0:
                raise ValueError(f"GamepadArmTeleop: {name} must be positive, got {value}")
        self.ik, self.mapping = ik, mapping
        self.damping, self.gain_per_s, self.max_lead_m = damping, gain_per_s, max_lead_m
        self.rotation_weight, self.max_joint_speed = rotation_weight, max_joint_speed
        self.q_arm: np.ndarray | None = None  # (14,) the arm joints commanded last
        self.pelvis_T_targets: list[np.ndarray] | None = None  # left, right

    def step(self, q_measured: np.ndarray, axes: Sequence[float], buttons: Sequence[int], dt: float) -> np.ndarray:
        """Arm joints (14,) for this control tick; ``dt`` (s) since the previous one (0 on the first)."""
        q_body = np.asarray(q_measured, dtype=float).copy()
        if self.q_arm is None:
            self.q_arm = q_body[self.ik.arm_indices].copy()
        q_body[self.ik.arm_indices] = self.q_arm
        pelvis_T_hands = self.ik.end_effector_poses(q_body)
        if self.pelvis_T_targets is None:
            self.pelvis_T_targets = [T.copy() for T in pelvis_T_hands]
        commands = []
        for twist, target, hand in zip(hand_twists(self.mapping, axes, buttons), self.pelvis_T_targets,
                                       pelvis_T_hands, strict=True):
            lead = target[:3, 3] + twist[:3] * dt - hand[:3, 3]
            lead *= min(1.0, self.max_lead_m / max(float(np.linalg.norm(lead)), 1e-12))
            target[:3, 3] = hand[:3, 3] + lead
            rotation_error = pin.log3(target[:3, :3] @ hand[:3, :3].T)  # pelvis axes
            commands.append(np.concatenate([twist[:3] + self.gain_per_s * lead,
                                            twist[3:] + self.gain_per_s * rotation_error]))
        self.q_arm = self.ik.differential_step(q_body, commands[0], commands[1], dt, self.damping,
                                               self.rotation_weight, self.max_joint_speed)
        return self.q_arm
