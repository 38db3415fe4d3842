"""The operator clutch: no jump at engage, relative following in the pelvis frame, re-anchoring on resume, holding
on stale or invalid tracking, homing within its speed bounds, and a clean resume from homing."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from g1_teleop.core.rotations import matrix_from_wxyz, wxyz_from_rpy
from g1_teleop.retarget.clutch import (
    Clutch,
    ClutchConfig,
    ClutchState,
    ClutchTransition,
    OperatorSample,
    Refused,
    WristPair,
)

EXACT = 1e-12


def pose(x: float, y: float, z: float, roll: float = 0.0, pitch: float = 0.0, yaw: float = 0.0) -> np.ndarray:
    T = np.eye(4)
    T[:3, :3] = matrix_from_wxyz(wxyz_from_rpy(roll, pitch, yaw))
    T[:3, 3] = (x, y, z)
    return T


ROBOT = WristPair(pose(0.25, 0.2, 0.05, 0.4, -0.3, 0.2), pose(0.28, -0.22, 0.1, -0.2, 0.5, -0.1))
HOME = WristPair(pose(0.2, 0.18, -0.05), pose(0.2, -0.18, -0.05))
OPERATOR = WristPair(pose(0.35, 0.25, 0.2, -0.1, 0.2, 0.6), pose(0.3, -0.3, 0.15, 0.3, -0.2, 0.1))


def moved(wrists: WristPair, shift: tuple[float, float, float], rotvec: tuple[float, float, float] = (0, 0, 0)):
    """The wrists moved by ``shift`` and turned by ``rotvec``, both in the pelvis frame."""
    R = Rotation.from_rotvec(rotvec).as_matrix()
    out = []
    for T in wrists:
        M = T.copy()
        M[:3, 3] += shift
        M[:3, :3] = R @ T[:3, :3]
        out.append(M)
    return WristPair(*out)


def sample(wrists: WristPair, t: float, valid: bool = True) -> OperatorSample:
    return OperatorSample(wrists, t, valid)


def engaged(t: float = 1.0) -> Clutch:
    clutch = Clutch(ClutchConfig(), HOME, ROBOT)
    clutch.step(t, sample(OPERATOR, t))
    transition = clutch.engage(t, ROBOT)
    assert isinstance(transition, ClutchTransition) and transition.state is ClutchState.ENGAGED
    return clutch


def assert_pair(actual: WristPair, expected: WristPair, atol: float = EXACT) -> None:
    for a, e in zip(actual, expected, strict=True):
        np.testing.assert_allclose(a, e, rtol=0.0, atol=atol)


def test_disengaged_at_start_holds_the_robot_wrists() -> None:
    clutch = Clutch(ClutchConfig(), HOME, ROBOT)
    step = clutch.step(0.5, sample(moved(OPERATOR, (0.1, 0, 0)), 0.5))
    assert clutch.state is ClutchState.DISENGAGED and step.transitions == ()
    assert_pair(step.targets, ROBOT, 0.0)


def test_no_jump_at_engage() -> None:
    clutch = engaged()
    assert_pair(clutch.step(1.0, sample(OPERATOR, 1.0)).targets, ROBOT)
    assert_pair(clutch.step(1.02, sample(OPERATOR, 1.02)).targets, ROBOT)


def test_following_is_relative_in_the_pelvis_frame() -> None:
    clutch = engaged()
    shift, turn = (0.05, -0.02, 0.1), (0.0, 0.0, 0.3)
    targets = clutch.step(1.02, sample(moved(OPERATOR, shift, turn), 1.02)).targets
    # the operator's motion, in the pelvis frame, applied to the robot's wrists — whatever their orientations
    assert_pair(targets, moved(ROBOT, shift, turn))


def test_equals_the_composition_when_the_wrists_were_aligned() -> None:
    """R0 ∘ O0⁻¹ ∘ O when the operator's and the robot's wrists had the same orientation at engage."""
    operator0 = WristPair(*(np.vstack([np.hstack([r[:3, :3], o[:3, 3:4]]), [0, 0, 0, 1]])
                            for r, o in zip(ROBOT, OPERATOR, strict=True)))
    clutch = Clutch(ClutchConfig(), HOME, ROBOT)
    clutch.step(1.0, sample(operator0, 1.0))
    clutch.engage(1.0, ROBOT)
    now = WristPair(*(T @ pose(0.03, -0.01, 0.02, 0.1, 0.2, -0.3) for T in operator0))
    targets = clutch.step(1.02, sample(now, 1.02)).targets
    composition = WristPair(*(r0 @ np.linalg.inv(o0) @ o for r0, o0, o in zip(ROBOT, operator0, now, strict=True)))
    assert_pair(targets, composition)


def test_engage_needs_fresh_valid_tracking() -> None:
    clutch = Clutch(ClutchConfig(), HOME, ROBOT)
    refused = clutch.engage(0.0, ROBOT)
    assert isinstance(refused, Refused) and refused.reason.startswith("no valid hand tracking: keep both hands")
    clutch.step(1.0, sample(OPERATOR, 1.0))
    refused = clutch.engage(1.5, ROBOT)
    assert isinstance(refused, Refused) and "for 0.5 s" in refused.reason
    clutch.step(2.0, sample(OPERATOR, 2.0, valid=False))
    assert isinstance(clutch.engage(2.0, ROBOT), Refused)
    assert clutch.state is ClutchState.DISENGAGED


def test_pause_and_resume_reanchor() -> None:
    clutch = engaged()
    clutch.step(1.1, sample(moved(OPERATOR, (0.05, 0, 0)), 1.1))
    paused = clutch.disengage(1.2)
    assert (paused.previous, paused.state, paused.reason) == (ClutchState.ENGAGED, ClutchState.DISENGAGED,
                                                              "paused by the operator")
    held = clutch.step(1.3, sample(moved(OPERATOR, (0.3, 0.1, 0)), 1.3)).targets  # the operator walks away
    assert_pair(held, moved(ROBOT, (0.05, 0, 0)))
    robot_now = moved(ROBOT, (0.049, 0.001, 0))  # where the robot's wrists really are (a mm of tracking error)
    assert clutch.toggle(1.4, robot_now).state is ClutchState.ENGAGED
    assert_pair(clutch.step(1.4, sample(moved(OPERATOR, (0.3, 0.1, 0)), 1.4)).targets, robot_now)
    after = clutch.step(1.5, sample(moved(OPERATOR, (0.3, 0.1, 0.02)), 1.5)).targets
    assert_pair(after, moved(robot_now, (0, 0, 0.02)))
    assert isinstance(clutch.engage(1.6, ROBOT), Refused)


def test_hold_after_200_ms_without_valid_tracking() -> None:
    clutch = engaged()
    last = clutch.step(1.05, sample(moved(OPERATOR, (0.02, 0, 0)), 1.05)).targets
    assert clutch.step(1.25, None).transitions == () and clutch.state is ClutchState.ENGAGED  # 200 ms: not yet
    step = clutch.step(1.2501, None)
    assert clutch.state is ClutchState.HOLDING
    assert step.transitions[0].reason == "no valid tracking for 200 ms"
    assert_pair(step.targets, last, 0.0)
    assert_pair(clutch.step(2.0, None).targets, last, 0.0)


def test_invalid_tracking_holds_at_once_and_resumes_reanchored() -> None:
    clutch = engaged()
    last = clutch.step(1.02, sample(moved(OPERATOR, (0.02, 0, 0)), 1.02)).targets
    step = clutch.step(1.04, sample(moved(OPERATOR, (0.5, 0, 0)), 1.04, valid=False))  # a fallback pose
    assert clutch.state is ClutchState.HOLDING and step.transitions[0].reason.startswith("tracking invalid")
    assert_pair(step.targets, last, 0.0)
    back = clutch.step(1.3, sample(moved(OPERATOR, (0.1, 0, 0)), 1.3))  # the hand came back elsewhere
    assert clutch.state is ClutchState.ENGAGED and back.transitions[0].reason.startswith("tracking back")
    assert_pair(back.targets, last)
    assert_pair(clutch.step(1.32, sample(moved(OPERATOR, (0.1, 0.03, 0)), 1.32)).targets, moved(last, (0, 0.03, 0)))


def test_homing_speed_bound_then_home() -> None:
    clutch = engaged()
    clutch.step(1.0, sample(OPERATOR, 1.0))
    clutch.step(1.3, None)
    assert clutch.state is ClutchState.HOLDING
    assert clutch.step(3.0, None).transitions == ()
    step = clutch.step(3.0001, None)
    assert clutch.state is ClutchState.HOMING and step.transitions[0].reason.startswith("no valid tracking for 2.0 s")
    previous, t, dt = step.targets, 3.0001, 0.02
    for _ in range(400):
        t += dt
        targets = clutch.step(t, None).targets
        for before, after in zip(previous, targets, strict=True):
            assert np.linalg.norm(after[:3, 3] - before[:3, 3]) <= 0.1 * dt + EXACT
            angle = np.linalg.norm(Rotation.from_matrix(after[:3, :3] @ before[:3, :3].T).as_rotvec())
            assert angle <= 0.5 * dt + 1e-9
        previous = targets
    assert_pair(previous, HOME, 0.0)  # 8 s: home reached and held there
    assert clutch.state is ClutchState.HOMING


def test_resumes_cleanly_from_homing() -> None:
    clutch = engaged()
    clutch.step(1.3, None)
    clutch.step(3.1, None)
    assert clutch.state is ClutchState.HOMING
    midway = clutch.step(3.6, None).targets
    assert not np.allclose(midway.left, ROBOT.left) and not np.allclose(midway.left, HOME.left)
    back = clutch.step(3.62, sample(moved(OPERATOR, (-0.2, 0.1, 0)), 3.62))
    assert clutch.state is ClutchState.ENGAGED
    assert [(t.previous, t.state) for t in back.transitions] == [(ClutchState.HOMING, ClutchState.ENGAGED)]
    assert_pair(back.targets, midway)
    follow = clutch.step(3.64, sample(moved(OPERATOR, (-0.2, 0.1, 0.01), (0.0, 0.1, 0.0)), 3.64)).targets
    shifted = WristPair(*(np.vstack([np.hstack([T[:3, :3], T[:3, 3:4] + [[0], [0], [0.01]]]), [0, 0, 0, 1]])
                          for T in midway))
    assert_pair(follow, moved(shifted, (0, 0, 0), (0.0, 0.1, 0.0)))


def test_a_long_gap_goes_straight_to_homing() -> None:
    clutch = engaged()
    step = clutch.step(5.0, None)
    assert [t.state for t in step.transitions] == [ClutchState.HOLDING, ClutchState.HOMING]


def test_config_is_checked() -> None:
    with pytest.raises(ValueError, match=r"home_after_s \(0.4 s\) must be longer than stale_after_s"):
        ClutchConfig(stale_after_s=0.5, home_after_s=0.4)
    with pytest.raises(ValueError, match="home_speed_m_s must be > 0"):
        ClutchConfig(home_speed_m_s=0.0)


def test_auto_follows_the_samples_themselves_from_the_first_one() -> None:
    """clutch auto (scenarios, bags): engaged by the first valid sample, the targets the sample's own arrays (a
    replay repeats bit for bit), no operator request accepted."""
    clutch = Clutch(ClutchConfig(), HOME, ROBOT, auto=True)
    assert_pair(clutch.step(0.0, None).targets, ROBOT, 0.0)
    assert clutch.state is ClutchState.DISENGAGED
    first = sample(OPERATOR, 0.02)
    step = clutch.step(0.02, first)
    assert [(t.previous, t.state, t.reason) for t in step.transitions] == [
        (ClutchState.DISENGAGED, ClutchState.ENGAGED, "following the source (clutch auto)")]
    assert step.targets is first.wrists
    later = sample(moved(OPERATOR, (0.1, 0.0, 0.0)), 0.04)
    assert clutch.step(0.04, later).targets is later.wrists
    for refused in (clutch.engage(0.05, ROBOT), clutch.disengage(0.05), clutch.toggle(0.05, ROBOT)):
        assert isinstance(refused, Refused) and refused.reason.startswith("the clutch is auto")
    assert clutch.state is ClutchState.ENGAGED


def test_auto_holds_homes_and_follows_again_absolutely() -> None:
    clutch = Clutch(ClutchConfig(), HOME, ROBOT, auto=True)
    clutch.step(1.0, sample(OPERATOR, 1.0))
    assert [t.state for t in clutch.step(3.1, None).transitions] == [ClutchState.HOLDING, ClutchState.HOMING]
    homing = clutch.step(3.2, None).targets
    assert not np.allclose(homing.left, OPERATOR.left)
    back = sample(moved(OPERATOR, (0.0, 0.05, 0.0)), 3.3)
    step = clutch.step(3.3, back)
    assert clutch.state is ClutchState.ENGAGED and step.targets is back.wrists
    assert step.transitions[0].reason == "tracking back: following the source again (clutch auto)"
