"""Settings of the dual-arm IK: the objective's weights, the clearance it keeps, the solver's stopping rules and
the output filter. ROS-free."""

from __future__ import annotations

from dataclasses import dataclass

from g1_teleop.core.filters import WeightedMovingFilter
from g1_teleop.core.settings import check_settings, setting


@dataclass(frozen=True)
class ArmIKConfig:
    """Weights of the IK objective and solver settings.

    The weights are those of OpenWBT's arm IK (deploy/teleop/robot_control/robot_arm_ik.py, G1_29_ArmIK:
    50, 1, 0.02, 0.1) but for the posture term: with 0.02 it pulls the answer 4-9 mm and 30-65 mrad away from
    reachable targets on the G1; 0.0002 keeps that pull around 1 mm at worst under steady tracking while still
    drawing the redundant elbow swivel slowly towards q = 0.
    max_iterations: a solve still short of convergence then returns the best collision-free point it found
    (``ArmIKResult.converged`` False) and the next solve, warm-started from the arm that follows it, goes on.
    8 bounds the solve time: reachable targets 0.1 rad away converge in 3-4, unreachable ones take 15-30 to
    converge fully but are within ~1 cm of that answer after 8.
    min_clearance_m needs a collision model (see ``DualArmIK``).
    """

    position_weight: float = setting(50.0, "IK weight per m² of hand position error", positive=True)
    rotation_weight: float = setting(1.0, "IK weight per rad² of hand orientation error", minimum=0.0)
    posture_weight: float = setting(0.0002, "IK weight on ‖q‖² of the arm joints (per rad²)", minimum=0.0)
    measured_weight: float = setting(0.1, "IK weight on ‖q − q_measured‖² of the arm joints (per rad²)",
                                     minimum=0.0)
    min_clearance_m: float = setting(0.01, "smallest distance the IK keeps between the forearms and hands and the "
                                     "trunk, the thighs and the other arm (m)", minimum=0.0)
    max_iterations: int = setting(8, "kinematics evaluations per IK solve", minimum=1)
    step_tolerance_rad: float = setting(1e-5, "an arm has converged when its undamped Gauss-Newton step (within "
                                        "the bounds) moves no joint more than this (rad)", positive=True)
    cost_tolerance: float = setting(1e-4, "an arm has also converged when that step is predicted to lower its "
                                    "objective by less than this fraction of it", positive=True)
    filter_weights: tuple[float, ...] = setting((0.4, 0.3, 0.2, 0.1), "output filter (WeightedMovingFilter) "
                                                "weights, newest first, summing to 1; (1.0,) disables it")
    left_frame: str = setting("left_ee", "left end-effector frame of the Pinocchio model")
    right_frame: str = setting("right_ee", "right end-effector frame of the Pinocchio model")

    def __post_init__(self) -> None:
        check_settings(self)
        if self.posture_weight + self.measured_weight <= 0.0:
            raise ValueError("posture_weight + measured_weight must be > 0 (they keep the problem well posed at "
                             "singular arm configurations)")
        try:
            WeightedMovingFilter(self.filter_weights)
        except ValueError as exc:
            raise ValueError(f"filter_weights: {exc}") from None
        if self.left_frame == self.right_frame:
            raise ValueError(f"left_frame and right_frame are both {self.left_frame!r}")
