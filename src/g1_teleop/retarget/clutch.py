"""The operator clutch: the robot's wrists follow the operator's only while engaged, relative to where both were
at the moment of engaging, so that nothing jumps. ROS-free.

Poses are 4×4 transforms in the pelvis frame (metres): the operator's wrists as xr_input publishes them
(xr/left_wrist, xr/right_wrist) and the robot's (the forward kinematics of the measured arms), both ``pelvis_T_wrist``.
Times are seconds on one clock (the caller's: monotonic, or the simulation's).

States and transitions (each a ``ClutchTransition`` record with its reason):

* DISENGAGED: the targets hold where they are (at start: the robot's wrists). ``engage(now, robot)`` with fresh
  valid tracking anchors robot and operator there → ENGAGED, and the first target is the robot's current wrist.
* ENGAGED: each valid operator sample O gives, per hand, with R0 and O0 the robot's and the operator's wrists at
  the anchor, the operator's motion since the anchor expressed in the pelvis frame and applied to R0:
  position p(R0) + p(O) − p(O0), rotation R(O)·R(O0)ᵀ·R(R0). This equals R0 ∘ O0⁻¹ ∘ O whenever the two wrists
  had the same orientation at the anchor; when they had not, that composition would turn the operator's motions
  by the difference (the hand moved up, the robot's moved forward), this keeps their directions.
* HOLDING: tracking is invalid (a sample with a fallback pose) or stale (no valid sample for more than
  ``stale_after_s``): the targets hold (the last one). Valid tracking again → ENGAGED, re-anchored at the held
  targets. No valid sample for more than ``home_after_s`` → HOMING.
* HOMING: the targets move to the home pose (given by the caller, e.g. the forward kinematics of the default
  arm pose) along the straight line and the shortest rotation, at most ``home_speed_m_s`` and
  ``home_speed_rad_s``, and stay there. Valid tracking again → ENGAGED, re-anchored at the current targets.
* ``disengage(now)`` (pause) from any engaged state → DISENGAGED, targets held; ``engage`` again (resume)
  re-anchors at the robot's current wrists. ``toggle`` does one or the other (the Joy ENGAGE button's press).

``auto=True`` (the graph's ``clutch:=auto``, for scenarios and bags, which are the robot's motion already): the
clutch engages by itself at the first valid sample and again whenever valid tracking comes back, and the targets
are the operator's wrists themselves (absolute mapping: the very arrays of the sample, so that a replayed run
repeats bit for bit); HOLDING and HOMING as above; ``engage``, ``disengage`` and ``toggle`` are refused.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum

import numpy as np

from g1_teleop.core.rotations import matrix_from_rotvec, rotvec_from_matrix
from g1_teleop.core.settings import check_settings, setting


@dataclass(frozen=True)
class ClutchConfig:
    """When tracking counts as stale, when the arms go home, and how fast."""

    stale_after_s: float = setting(0.2, "the arms hold when no valid operator sample came for this long (s)",
                                   positive=True)
    home_after_s: float = setting(2.0, "the arms return home when no valid operator sample came for this long (s)",
                                  positive=True)
    home_speed_m_s: float = setting(0.1, "largest wrist speed on the way home (m/s)", positive=True)
    home_speed_rad_s: float = setting(0.5, "largest wrist rotation speed on the way home (rad/s)", positive=True)

    def __post_init__(self) -> None:
        check_settings(self)
        if self.home_after_s <= self.stale_after_s:
            raise ValueError(f"home_after_s ({self.home_after_s} s) must be longer than stale_after_s "
                             f"({self.stale_after_s} s)")


@dataclass(frozen=True)
class WristPair:
    """The two wrists' poses ``pelvis_T_wrist`` (4×4, m)."""

    left: np.ndarray
    right: np.ndarray

    def __iter__(self):
        return iter((self.left, self.right))


@dataclass(frozen=True)
class OperatorSample:
    """The operator's wrists (pelvis frame) received at ``received_s``; ``valid``: both came from the tracking
    (not xr_frames' fallback poses)."""

    wrists: WristPair
    received_s: float
    valid: bool = True


class ClutchState(Enum):
    DISENGAGED = "disengaged"
    ENGAGED = "engaged"
    HOLDING = "holding"
    HOMING = "homing"


@dataclass(frozen=True)
class ClutchTransition:
    """The clutch went from ``previous`` to ``state`` at ``time_s``, because ``reason``."""

    time_s: float
    previous: ClutchState
    state: ClutchState
    reason: str


@dataclass(frozen=True)
class Refused:
    """A request the clutch did not carry out, and why (one line, what to do)."""

    reason: str


@dataclass(frozen=True)
class ClutchStep:
    """One step's wrist targets (pelvis frame) and the transitions it made."""

    targets: WristPair
    transitions: tuple[ClutchTransition, ...]


_AUTO_REFUSAL = Refused("the clutch is auto (a scenario or a bag): it follows the source by itself; start retarget "
                        "with clutch:=operator to engage and pause by hand")


class Clutch:
    """See the module docstring. ``home``: where the arms go when tracking is lost for long; ``robot``: the
    robot's wrists now (the first targets); ``auto``: engaged by the samples themselves, absolute mapping."""

    def __init__(self, config: ClutchConfig, home: WristPair, robot: WristPair, auto: bool = False) -> None:
        self.config = config
        self.auto = auto
        self.home = WristPair(*(np.array(T, dtype=float) for T in home))
        self.state = ClutchState.DISENGAGED
        self.targets = WristPair(*(np.array(T, dtype=float) for T in robot))
        self.last_valid: OperatorSample | None = None
        self._anchor: tuple[WristPair, WristPair] | None = None  # robot's and operator's wrists
        self._last_step_s: float | None = None

    def engage(self, now_s: float, robot: WristPair) -> ClutchTransition | Refused:
        """Start following, anchored at the robot's wrists ``robot`` and the newest valid operator sample."""
        if self.auto:
            return _AUTO_REFUSAL
        if self.state is not ClutchState.DISENGAGED:
            return Refused(f"already {self.state.value}: disengage first")
        if self.last_valid is None or now_s - self.last_valid.received_s > self.config.stale_after_s:
            since = "" if self.last_valid is None else f" for {now_s - self.last_valid.received_s:.1f} s"
            return Refused(f"no valid hand tracking{since}: keep both hands (or controllers) in the headset's view, "
                           "then engage")
        self.targets = WristPair(*(np.array(T, dtype=float) for T in robot))
        self._anchor = (self.targets, self.last_valid.wrists)
        return self._go(now_s, ClutchState.ENGAGED, "engaged by the operator")

    def disengage(self, now_s: float) -> ClutchTransition | Refused:
        """Stop following; the targets hold where they are."""
        if self.auto:
            return _AUTO_REFUSAL
        if self.state is ClutchState.DISENGAGED:
            return Refused("not engaged")
        return self._go(now_s, ClutchState.DISENGAGED, "paused by the operator")

    def toggle(self, now_s: float, robot: WristPair) -> ClutchTransition | Refused:
        """Engage when disengaged, else disengage."""
        return self.engage(now_s, robot) if self.state is ClutchState.DISENGAGED else self.disengage(now_s)

    def step(self, now_s: float, sample: OperatorSample | None = None) -> ClutchStep:
        """Advance to ``now_s`` with the operator's newest sample, if one came; the wrist targets to follow."""
        transitions: list[ClutchTransition] = []
        fresh = sample is not None and sample.valid
        if fresh:
            self.last_valid = sample
        dt = 0.0 if self._last_step_s is None else max(now_s - self._last_step_s, 0.0)
        self._last_step_s = now_s
        age = math.inf if self.last_valid is None else now_s - self.last_valid.received_s
        if self.state is ClutchState.ENGAGED:
            if sample is not None and not sample.valid:
                transitions.append(self._go(now_s, ClutchState.HOLDING, "tracking invalid (a hand or the head lost)"))
            elif age > self.config.stale_after_s:
                transitions.append(self._go(now_s, ClutchState.HOLDING,
                                            f"no valid tracking for {age * 1000:.0f} ms"))
            elif fresh:
                self.targets = sample.wrists if self.auto else self._follow(sample.wrists)
        elif self.auto and fresh:
            self.targets = sample.wrists
            reason = "following the source (clutch auto)" if self.state is ClutchState.DISENGAGED else \
                "tracking back: following the source again (clutch auto)"
            transitions.append(self._go(now_s, ClutchState.ENGAGED, reason))
        elif self.state in (ClutchState.HOLDING, ClutchState.HOMING) and fresh:
            self._anchor = (self.targets, sample.wrists)
            transitions.append(self._go(now_s, ClutchState.ENGAGED, "tracking back: re-anchored where the arms are"))
        if self.state is ClutchState.HOLDING and age > self.config.home_after_s:
            transitions.append(self._go(now_s, ClutchState.HOMING, f"no valid tracking for {age:.1f} s: going home"))
        elif self.state is ClutchState.HOMING:
            self.targets = WristPair(*(self._toward(T, H, dt) for T, H in zip(self.targets, self.home, strict=True)))
        return ClutchStep(self.targets, tuple(transitions))

    def _go(self, now_s: float, state: ClutchState, reason: str) -> ClutchTransition:
        transition = ClutchTransition(now_s, self.state, state, reason)
        self.state = state
        return transition

    def _follow(self, operator: WristPair) -> WristPair:
        assert self._anchor is not None
        robot0, operator0 = self._anchor
        targets = []
        for r0, o0, o in zip(robot0, operator0, operator, strict=True):
            T = np.eye(4)
            T[:3, :3] = o[:3, :3] @ o0[:3, :3].T @ r0[:3, :3]
            T[:3, 3] = r0[:3, 3] + (o[:3, 3] - o0[:3, 3])
            targets.append(T)
        return WristPair(*targets)

    def _toward(self, T: np.ndarray, home: np.ndarray, dt: float) -> np.ndarray:
        """One homing step of ``dt`` seconds from ``T`` toward ``home``, within the speed bounds."""
        out = np.array(T)
        d = home[:3, 3] - T[:3, 3]
        distance = float(np.linalg.norm(d))
        reach = self.config.home_speed_m_s * dt
        out[:3, 3] = home[:3, 3] if distance <= reach else T[:3, 3] + d * (reach / distance)
        turn = rotvec_from_matrix(home[:3, :3] @ T[:3, :3].T)
        angle = float(np.linalg.norm(turn))
        reach = self.config.home_speed_rad_s * dt
        out[:3, :3] = home[:3, :3] if angle <= reach else (
            matrix_from_rotvec(turn * (reach / angle)) @ T[:3, :3])
        return out
