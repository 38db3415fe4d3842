"""An operator's hand (25 landmarks) → the 7 joints of one Dex3 hand: bounded least squares. ROS-free.

The objective is dex-retargeting's vector retargeting with DexPilot's pinch term (Qin et al., "AnyTeleop", RSS
2023; Handa et al., "DexPilot", ICRA 2020), solved here by a few bounded Levenberg–Marquardt steps on Pinocchio's
Jacobians: the ``dex-retargeting`` package (0.5.x) imports PyTorch for its loss's gradients, which PyPI ships for
Linux only with NVIDIA's CUDA libraries (28 more packages, several GB) — too much for 7 joints. The residuals:

- each fingertip (thumb, index, middle) at the operator's fingertip as seen from the wrist, ``scale``d and
  turned into the palm frame (the wrist landmark sits at the palm origin);
- each of thumb–index and thumb–middle at the operator's distance (scaled, at least ``pinch_gap_m``), weighted
  from 0 when the operator's fingertips are ``pinch_far_m`` apart up to ``pinch_weight`` at ``pinch_near_m``
  and closer, and shared between the two fingers by which is nearer the thumb (the Dex3's fingers are 57 mm
  apart: a thumb pulled to both would touch neither): an operator's pinch closes the robot's thumb on that
  finger even where the Dex3 cannot put every fingertip where the human ones are;
- the change from the previous solution (``smoothness_weight``), which also picks one of equal solutions.

Each solution is clipped to the joint limits given (config/dex3.yaml's) and low-pass filtered
(``low_pass_alpha``). Landmarks: WebXR Hand Input order, the hand frame of xr/*_hand (hand_landmarks).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from g1_teleop.core.dex3_description import Dex3
from g1_teleop.core.hand_landmarks import HAND_LANDMARKS, INDEX_TIP, MIDDLE_TIP, THUMB_TIP, WRIST
from g1_teleop.core.settings import check_settings, setting
from g1_teleop.retarget.hand_retarget_kinematics import FINGERS, Dex3Kinematics

# Landmark hand frame (x back of the hand, y fingers → wrist, z the OpenXR joint x: towards the thumb of a left
# hand, the little finger of a right one) → Dex3 palm frame (hand_retarget_kinematics): rows are the palm axes.
PALM_R_LANDMARKS = {
    "left": np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]),
    "right": np.array([[0.0, -1.0, 0.0], [-1.0, 0.0, 0.0], [0.0, 0.0, -1.0]]),
}
_LANDMARK_TIPS = (THUMB_TIP, INDEX_TIP, MIDDLE_TIP)  # in FINGERS order
_POS = 3 * len(FINGERS)  # fingertip position residuals
PINCH_CHOICE_M = 0.02  # the thumb pinches the nearer finger: alone once the other is this much (m) further


class HandLandmarksError(ValueError):
    """Landmarks that cannot be retargeted (wrong shape, not finite, an untracked hand's zeros)."""


@dataclass(frozen=True)
class HandRetargetConfig:
    """The hand retargeter's settings (also hand_retarget's ROS parameters)."""

    scale: float = setting(1.0, "operator fingertip positions (from the wrist) → Dex3 ones: the Dex3's open middle "
                           "fingertip is 0.18 m from its palm origin, an adult's 0.17–0.20 m from the wrist",
                           positive=True)
    pinch_near_m: float = setting(0.02, "operator thumb–finger tip distance at or below which the pinch pull is "
                                  "full (m)", positive=True)
    pinch_far_m: float = setting(0.06, "operator thumb–finger tip distance from which there is no pinch pull (m)",
                                 positive=True)
    pinch_gap_m: float = setting(0.018, "distance of the Dex3's fingertip points in a closed pinch: the pads touch "
                                 "(m)", minimum=0.0)
    pinch_weight: float = setting(4.0, "weight of a full pinch's distance against a fingertip's position",
                                  minimum=0.0)
    smoothness_weight: float = setting(0.002, "weight of the change from the previous solution (m²/rad²)",
                                       minimum=0.0)
    low_pass_alpha: float = setting(0.3, "the newest solution's share of the output, per operator sample "
                                    "(1: no filter)", positive=True, maximum=1.0)
    max_iterations: int = setting(15, "Levenberg–Marquardt steps at most per operator sample", minimum=1)

    def __post_init__(self) -> None:
        check_settings(self)
        if self.pinch_near_m >= self.pinch_far_m:
            raise ValueError(f"pinch_near_m ({self.pinch_near_m}) must be below pinch_far_m ({self.pinch_far_m})")


def check_landmarks(points: np.ndarray) -> np.ndarray:
    """(25, 3) finite landmarks as floats, or HandLandmarksError saying what is wrong."""
    p = np.asarray(points, dtype=float)
    if p.shape != (HAND_LANDMARKS, 3):
        raise HandLandmarksError(f"hand landmarks must have shape ({HAND_LANDMARKS}, 3), got {p.shape}")
    bad = np.flatnonzero(~np.isfinite(p).all(axis=1))
    if bad.size:
        raise HandLandmarksError(f"hand landmarks {bad.tolist()} are not finite (NaN or inf): not retargeted, the "
                                 "hand holds")
    if not p.any():
        raise HandLandmarksError("hand landmarks are all zero (the hand is not tracked): not retargeted, the "
                                 "hand holds")
    return p


class HandRetargeter:
    """One Dex3 hand as config/dex3.yaml describes it; the output in its motor order, within its joint limits (rad;
    the hand at rest, 0, inside them)."""

    def __init__(self, side: str, dex3: Dex3, config: HandRetargetConfig | None = None) -> None:
        self.config = config or HandRetargetConfig()
        self.kinematics = Dex3Kinematics(side, dex3.model)
        self.lower, self.upper = dex3.limits[side].q_lower, dex3.limits[side].q_upper
        self.palm_R_landmarks = PALM_R_LANDMARKS[side]
        self.reset()

    def reset(self) -> None:
        """Start again from the open hand (no previous solution, an empty filter)."""
        self.solution = np.clip(np.zeros(self.lower.size), self.lower, self.upper)
        self.output: np.ndarray | None = None

    def update(self, landmarks: np.ndarray) -> np.ndarray:
        """The filtered joint targets (rad, within the limits) for one operator sample."""
        q = self.solve(landmarks)
        a = self.config.low_pass_alpha
        self.output = q if self.output is None else a * q + (1.0 - a) * self.output
        return np.clip(self.output, self.lower, self.upper)

    def targets(self, landmarks: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The fingertip targets (3, 3) in the palm frame (m), the thumb–index and thumb–middle target distances
        (2,) (m) and their weights (2,)."""
        p = check_landmarks(landmarks)
        cfg = self.config
        human = p[list(_LANDMARK_TIPS)] - p[WRIST]
        tips = cfg.scale * human @ self.palm_R_landmarks.T
        apart = np.linalg.norm(human[1:] - human[0], axis=1)
        closure = np.clip((cfg.pinch_far_m - apart) / (cfg.pinch_far_m - cfg.pinch_near_m), 0.0, 1.0)
        index_first = np.clip(0.5 + (apart[1] - apart[0]) / PINCH_CHOICE_M, 0.0, 1.0)
        weights = cfg.pinch_weight * closure * (index_first, 1.0 - index_first)
        return tips, np.maximum(cfg.scale * apart, cfg.pinch_gap_m), weights

    def solve(self, landmarks: np.ndarray) -> np.ndarray:
        """The least-squares joint targets (rad, within the limits), unfiltered; warm-started from the last.

        Levenberg–Marquardt steps on the joints not held at a limit by the gradient; a step that does not lower
        the cost is refused and the damping raised."""
        tips_target, distance_target, pinch_w = self.targets(landmarks)
        cfg, q_prev = self.config, self.solution
        r, J = np.empty(_POS + 2), np.empty((_POS + 2, q_prev.size))  # fingertips, then the two pinches

        def evaluate(q: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
            tips, jac = self.kinematics.tips_and_jacobians(q)
            gaps = tips[1:] - tips[0]
            apart = np.sqrt(np.maximum((gaps * gaps).sum(axis=1), 1e-18))
            r[:_POS] = (tips - tips_target).ravel()
            r[_POS:] = pinch_w * (apart - distance_target)
            J[:_POS] = jac.reshape(_POS, -1)
            J[_POS:] = (pinch_w / apart)[:, None] * np.einsum("fk,fkn->fn", gaps, jac[1:] - jac[0])
            dq = q - q_prev
            return float(r @ r + cfg.smoothness_weight * dq @ dq), J.T @ J, J.T @ r + cfg.smoothness_weight * dq

        q = q_prev.copy()
        cost, H, g = evaluate(q)
        damping = 1e-4
        eye = np.eye(q.size)
        for _ in range(cfg.max_iterations):
            held = ((q <= self.lower) & (g > 0.0)) | ((q >= self.upper) & (g < 0.0))  # pushed against a limit
            A = H + (cfg.smoothness_weight + damping) * eye
            A[held], A[:, held], A[held, held] = 0.0, 0.0, 1.0
            step = np.linalg.solve(A, np.where(held, 0.0, -g))
            q_next = np.clip(q + step, self.lower, self.upper)
            cost_next, H_next, g_next = evaluate(q_next)
            if cost_next < cost:
                converged = cost - cost_next < 1e-10 or np.max(np.abs(q_next - q)) < 1e-4
                q, cost, H, g = q_next, cost_next, H_next, g_next
                damping *= 0.3
                if converged:
                    break
            else:
                damping *= 10.0
        self.solution = q
        return q.copy()
