"""Settings of the whole-body retargeting and GMR's ``xrobot_to_g1`` tables. ROS-free.

The tables are those of GMR (General Motion Retargeting, YanjieZe/GMR) for XRobot's body layout on the G1, as
its forks ship them (yunhao-crypto/GMR, general_motion_retargeting/ik_configs/xrobot_to_g1.json; the same values
in louislelay/GMR): per robot link, the operator's body point it follows, its (position, orientation) task
costs in the two IK phases, and a position offset (m) and rotation offset (w, x, y, z) in the point's frame;
the human scale table (per point, for a 1.8 m operator). The toe frames are GMR's ``left/right_toe_link``
bodies of its G1 model (YanjieZe/GMR, assets/unitree_g1/g1_mocap_29dof.xml: 0.1, 0, −0.02 m on the ankle roll
link), which the official description lacks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from g1_teleop.core.body_points import body_point_index
from g1_teleop.core.settings import check_settings, setting

HUMAN_ROOT = "Pelvis"
ROBOT_ROOT = "pelvis"
HUMAN_HEIGHT_ASSUMPTION_M = 1.8  # GMR's human_height_assumption of xrobot_to_g1
TOE_FRAMES = {"left_toe_link": "left_ankle_roll_link", "right_toe_link": "right_ankle_roll_link"}
TOE_POSITION_M = (0.1, 0.0, -0.02)  # in the ankle roll link
FOOT_POINTS = ("Left_Foot", "Right_Foot")  # GMR's ground rule looks at the points named "Foot"


@dataclass(frozen=True)
class TrackedBody:
    """One row of GMR's match tables: ``link`` of the robot follows body point ``point``."""

    link: str
    point: str
    phase1: tuple[float, float]  # (position cost per m, orientation cost per rad), mink's FrameTask costs
    phase2: tuple[float, float]
    position_offset: tuple[float, float, float]  # m, in the offset point frame
    rotation_offset_wxyz: tuple[float, float, float, float]  # point frame → link frame
    scale: float  # GMR's human_scale_table entry (for HUMAN_HEIGHT_ASSUMPTION_M)

    @property
    def point_index(self) -> int:
        return body_point_index(self.point)


_LEGS_ROT = (-0.5, 0.5, -0.5, -0.5)
XROBOT_TO_G1: tuple[TrackedBody, ...] = (
    TrackedBody("pelvis", "Pelvis", (0, 10), (10, 5), (0, 0, 0), _LEGS_ROT, 0.9),
    TrackedBody("left_hip_yaw_link", "Left_Hip", (0, 10), (10, 5), (0, 0, 0), _LEGS_ROT, 0.9),
    TrackedBody("left_knee_link", "Left_Knee", (0, 10), (10, 5), (0, 0, 0), _LEGS_ROT, 0.9),
    TrackedBody("left_toe_link", "Left_Foot", (100, 10), (100, 10), (0.05, 0, 0), _LEGS_ROT, 0.9),
    TrackedBody("right_hip_yaw_link", "Right_Hip", (0, 10), (10, 5), (0, 0, 0), _LEGS_ROT, 0.9),
    TrackedBody("right_knee_link", "Right_Knee", (0, 10), (10, 5), (0, 0, 0), _LEGS_ROT, 0.9),
    TrackedBody("right_toe_link", "Right_Foot", (100, 10), (100, 10), (0.05, 0, 0), _LEGS_ROT, 0.9),
    TrackedBody("torso_link", "Spine3", (0, 10), (0, 10), (0, 0, 0), _LEGS_ROT, 0.9),
    TrackedBody("left_shoulder_yaw_link", "Left_Shoulder", (0, 10), (0, 10), (0, 0, 0), (0.70711, 0, 0.70711, 0), 0.8),
    TrackedBody("left_elbow_link", "Left_Elbow", (0, 10), (0, 10), (0, 0, 0), (0, 0, 1, 0), 0.8),
    TrackedBody("left_wrist_yaw_link", "Left_Wrist", (0, 10), (0, 10), (0, 0, 0), (0, 0, 1, 0), 0.8),
    TrackedBody("right_shoulder_yaw_link", "Right_Shoulder", (0, 10), (0, 10), (0, 0, 0), (0, 0.70711, 0, -0.70711),
                0.8),
    TrackedBody("right_elbow_link", "Right_Elbow", (0, 10), (0, 10), (0, 0, 0), (0, 1, 0, 0), 0.8),
    TrackedBody("right_wrist_yaw_link", "Right_Wrist", (0, 10), (0, 10), (0, 0, 0), (0, 1, 0, 0), 0.8),
)

# The body chains through the tracked points, pelvis outwards: calibration measures each point's path length
# from the pelvis along them (pose-independent: the sum of rigid segments).
POINT_PARENTS = {
    "Left_Hip": "Pelvis", "Left_Knee": "Left_Hip", "Left_Foot": "Left_Knee",
    "Right_Hip": "Pelvis", "Right_Knee": "Right_Hip", "Right_Foot": "Right_Knee",
    "Spine3": "Pelvis", "Left_Shoulder": "Spine3", "Left_Elbow": "Left_Shoulder", "Left_Wrist": "Left_Elbow",
    "Right_Shoulder": "Spine3", "Right_Elbow": "Right_Shoulder", "Right_Wrist": "Right_Elbow",
}

# The body points no task follows, placed on a tracked link (position in the link frame, m) when a stream is
# synthesised from a robot motion (``WholeBodyRetargeter.body_points``), with that link's point orientation.
UNTRACKED_POINTS = {
    "Spine1": ("pelvis", (0.0, 0.0, 0.1)), "Spine2": ("torso_link", (0.0, 0.0, 0.2)),
    "Left_Ankle": ("left_toe_link", (-0.1, 0.0, 0.02)), "Right_Ankle": ("right_toe_link", (-0.1, 0.0, 0.02)),
    "Neck": ("torso_link", (0.0, 0.0, 0.4)), "Head": ("torso_link", (0.05, 0.0, 0.45)),
    "Left_Collar": ("torso_link", (0.0, 0.05, 0.35)), "Right_Collar": ("torso_link", (0.0, -0.05, 0.35)),
    "Left_Hand": ("left_wrist_yaw_link", (0.1, 0.0, 0.0)), "Right_Hand": ("right_wrist_yaw_link", (0.1, 0.0, 0.0)),
}


@dataclass(frozen=True)
class WholeBodyConfig:
    """Solver settings of the whole-body retargeting (GMR's method, ``whole_body``).

    GMR iterates mink's differential IK per phase while the task error drops by more than 1e-3, at most 11
    steps (YanjieZe/GMR, general_motion_retargeting/motion_retarget.py); here each phase is a Levenberg-Marquardt
    solve to convergence with the same cap. Joint speed: GMR's VelocityLimit of 3π rad/s per joint (same file,
    later upstream), applied over the time between two body frames.
    """

    max_iterations: int = setting(11, "kinematics evaluations per IK phase (GMR: 1 + 10 iterations)", minimum=1)
    step_tolerance_rad: float = setting(1e-5, "a phase has converged when its undamped step moves no coordinate "
                                        "more than this (rad, m)", positive=True)
    cost_tolerance: float = setting(1e-4, "a phase has also converged when that step is predicted to lower the "
                                    "objective by less than this fraction of it", positive=True)
    max_joint_speed: float = setting(3.0 * math.pi, "largest joint speed between two body frames (rad/s)",
                                     positive=True)
    smoothing_weight: float = setting(1e-4, "weight on ‖x − x_previous‖² (per rad², m²): keeps coordinates no task "
                                      "sees at the previous frame's", minimum=0.0)
    min_clearance_m: float = setting(0.01, "smallest distance kept between the forearms and hands and the trunk, the "
                                     "thighs and the other arm (m; with a collision model)", minimum=0.0)
    calibration_s: float = setting(2.0, "the operator stands still this long to calibrate (s)", positive=True)
    still_tolerance_m: float = setting(0.05, "during calibration no body point may leave its mean by more (m)",
                                       positive=True)

    def __post_init__(self) -> None:
        check_settings(self)
