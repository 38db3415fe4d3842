"""retarget's settings: the dual-arm IK's, the gamepad mode's and the operator clutch's, each declared once (the
IK's, the gamepad's and the clutch's own settings are taken from their configurations). ROS-free."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from g1_teleop.core.dex3_description import dex3_setting
from g1_teleop.core.settings import check_settings, setting
from g1_teleop.core.xr_input_contract import LIVE_SOURCES, SOURCES, JoyButton
from g1_teleop.retarget.arm_ik import ArmIKConfig
from g1_teleop.retarget.clutch import ClutchConfig
from g1_teleop.retarget.gamepad_ik import GamepadMapping
from g1_teleop.retarget.head_waist import HeadWaistConfig
from g1_teleop.retarget.wrist_targets import CLUTCH_MODES

MODES = ("pose", "gamepad")
WAIST_SOURCES = ("hold", "head")


def setting_of(config: type, name: str) -> Any:
    """A field with the default, description and legal values of the setting ``name`` of the dataclass
    ``config``: a parameter that passes straight to a core configuration is declared once, there."""
    field = next(f for f in dataclasses.fields(config) if f.name == name)
    return dataclasses.field(default=field.default, metadata=field.metadata)


@dataclass(frozen=True)
class RetargetSettings:
    """retarget's settings: the IK's, the gamepad mode's, the clutch's and the operator input's."""

    model: str = setting("", "robot model file (MJCF .xml or URDF); empty: the one robot_config names")
    robot_config: str = setting("", "robot configuration (YAML); empty: config/g1_29dof.yaml")
    dex3: bool = dex3_setting()
    lockstep: bool = setting(True, "one answer per control period, once the period's joint state and wrist poses "
                             "are in (clutch operator: at once with the joint state); false: an answer per wrist "
                             "pair, and to joint states taken state_solve_rate_hz times a second")
    state_solve_rate_hz: float = setting(50.0, "real time: how often the newest joint state is taken and answered "
                                         "alone (pose mode: none within 1.5 periods of a wrist pair, which is "
                                         "answered at once; they refresh the warm start and the clutch's hold and "
                                         "home when the wrists stop; gamepad mode: a hand step each) (Hz)",
                                         positive=True)
    sync_timeout_s: float = setting(1.0, "lockstep: wall time to wait for a period's wrist poses before solving "
                                    "with the latest ones (s)", positive=True)
    position_weight: float = setting_of(ArmIKConfig, "position_weight")
    rotation_weight: float = setting_of(ArmIKConfig, "rotation_weight")
    posture_weight: float = setting_of(ArmIKConfig, "posture_weight")
    measured_weight: float = setting_of(ArmIKConfig, "measured_weight")
    min_clearance_m: float = setting_of(ArmIKConfig, "min_clearance_m")
    mode: str = setting("pose", "operator input: pose (wrist poses from a headset or a scenario) or gamepad "
                        "(joy sticks → hand velocities)", choices=MODES)
    gamepad_axes: tuple[int, ...] = setting((1, 0, 4, 3), "Joy axes: left forward, left side, right forward, "
                                            "right side", length=4, minimum=0)
    gamepad_up_buttons: tuple[int, ...] = setting((4, 5), "Joy buttons (left, right) that, held, turn the side's "
                                                  "forward axis into up", length=2, minimum=0)
    gamepad_speed_m_s: float = setting_of(GamepadMapping, "speed_m_s")
    gamepad_deadzone: float = setting_of(GamepadMapping, "deadzone")
    gamepad_damping: float = setting(0.05, "λ of the gamepad's damped least squares: larger slows the hands near "
                                     "singularities (m/rad)", positive=True)
    gamepad_max_joint_speed: float = setting(2.0, "fastest arm joint motion in gamepad mode (rad/s)", positive=True)
    joy_timeout_s: float = setting(0.5, "joy input older than this counts as sticks released (s)", positive=True)
    clutch: str = setting("", "auto: the wrists are followed as they come, from the first sample (scenarios, bags); "
                          "operator: only while engaged, relative to where the wrists were at the engage (a headset); "
                          "empty: operator with source webxr, auto otherwise", choices=("", *CLUTCH_MODES))
    stale_after_s: float = setting_of(ClutchConfig, "stale_after_s")
    home_after_s: float = setting_of(ClutchConfig, "home_after_s")
    home_speed_m_s: float = setting_of(ClutchConfig, "home_speed_m_s")
    home_speed_rad_s: float = setting_of(ClutchConfig, "home_speed_rad_s")
    waist: str = setting("hold", "pose mode: hold (the lower-body controller keeps the waist) or head (while engaged "
                         "the operator's head yaw and pitch turn and bend the waist: the robot's head cameras are on "
                         "its torso)", choices=WAIST_SOURCES)
    waist_yaw_gain: float = setting_of(HeadWaistConfig, "yaw_gain")
    waist_pitch_gain: float = setting_of(HeadWaistConfig, "pitch_gain")
    waist_deadband_rad: float = setting_of(HeadWaistConfig, "deadband_rad")
    source: str = setting("scenario", "xr_input's source (the graphs pass it): chooses the clutch when clutch is "
                          "empty", choices=SOURCES)
    engage_button: int = setting(int(JoyButton.ENGAGE), "clutch operator: the button of the headset's Joy (frame "
                                 "xr_hands or xr_controllers) whose press engages or pauses (the XR layout's ENGAGE)",
                                 minimum=0)

    def __post_init__(self) -> None:
        check_settings(self)
        self.ik_config()  # and the cross-field checks of the IK, gamepad and clutch settings
        self.gamepad_mapping()
        self.clutch_config()

    def clutch_mode(self) -> str:
        return self.clutch or ("operator" if self.source in LIVE_SOURCES else "auto")

    def described(self) -> str:
        """The mode and (pose mode) the clutch, as the start-up line says them."""
        if self.mode != "pose":
            return f"mode {self.mode}"
        if self.clutch_mode() == "operator":
            return (f"mode pose, clutch operator: the arms follow once engaged (Joy button {self.engage_button}, or "
                    "g1-teleop call engage)")
        return f"mode pose, clutch {self.clutch_mode()}"

    def head_waist_config(self) -> HeadWaistConfig:
        return HeadWaistConfig(self.waist_yaw_gain, self.waist_pitch_gain, self.waist_deadband_rad)

    def clutch_config(self) -> ClutchConfig:
        return ClutchConfig(stale_after_s=self.stale_after_s, home_after_s=self.home_after_s,
                            home_speed_m_s=self.home_speed_m_s, home_speed_rad_s=self.home_speed_rad_s)

    def gamepad_mapping(self) -> GamepadMapping:
        lf, ls, rf, rs = self.gamepad_axes
        return GamepadMapping(left_forward_axis=lf, left_side_axis=ls, left_up_button=self.gamepad_up_buttons[0],
                              right_forward_axis=rf, right_side_axis=rs, right_up_button=self.gamepad_up_buttons[1],
                              speed_m_s=self.gamepad_speed_m_s, deadzone=self.gamepad_deadzone)

    def ik_config(self) -> ArmIKConfig:
        return ArmIKConfig(position_weight=self.position_weight, rotation_weight=self.rotation_weight,
                           posture_weight=self.posture_weight, measured_weight=self.measured_weight,
                           min_clearance_m=self.min_clearance_m)
