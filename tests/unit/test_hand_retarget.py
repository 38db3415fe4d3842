"""The Dex3 hand retargeter on model operator hands: open, fist, pinch, limits, refused landmarks, layouts."""

from __future__ import annotations

import numpy as np
import pytest

from g1_teleop.core.dex3_description import SIDES, load_dex3
from g1_teleop.core.hand_landmarks import THUMB_TIP, to_webxr_order
from g1_teleop.launching.graph_description import load_graph
from g1_teleop.retarget.hand_retarget import HandLandmarksError, HandRetargetConfig, HandRetargeter
from g1_teleop.retarget.hand_retarget_kinematics import Dex3Kinematics
from g1_teleop.tools.bench.hand_poses import hand_landmarks
from g1_teleop.tools.bench.hands import bench_hands

DEX3 = load_dex3()
FINGER_JOINTS = [DEX3.motor_order.index(j) for j in ("index_0", "index_1", "middle_0", "middle_1")]


def retargeter(side: str, **settings) -> HandRetargeter:
    return HandRetargeter(side, DEX3, HandRetargetConfig(**settings))


def settle(r: HandRetargeter, landmarks: np.ndarray, samples: int = 30) -> np.ndarray:
    """The output after the operator held this pose for ``samples`` samples (the filter settled)."""
    for _ in range(samples):
        q = r.update(landmarks)
    return q


def thumb_index_m(r: HandRetargeter, q: np.ndarray) -> float:
    tips = r.kinematics.tips(q)
    return float(np.linalg.norm(tips[1] - tips[0]))


@pytest.mark.parametrize("side", SIDES)
def test_open_hand_leaves_the_fingers_open_and_a_fist_closes_them(side):
    r = retargeter(side)
    q_open = settle(r, hand_landmarks(side))
    assert np.all(np.abs(q_open[FINGER_JOINTS]) < 0.3), q_open
    q_fist = settle(r, hand_landmarks(side, curl=1.0))
    closing = DEX3.limits[side].q_upper if side == "right" else DEX3.limits[side].q_lower  # fingers close towards
    assert np.all(np.abs(q_fist[FINGER_JOINTS]) > 0.5 * np.abs(closing[FINGER_JOINTS])), q_fist
    assert np.all(np.sign(q_fist[FINGER_JOINTS]) == np.sign(closing[FINGER_JOINTS]))


@pytest.mark.parametrize("side", SIDES)
def test_a_pinch_closes_the_thumb_on_the_index_and_opening_parts_them(side):
    r = retargeter(side)
    open_gap = thumb_index_m(r, settle(r, hand_landmarks(side)))
    for pinch in np.linspace(0.0, 1.0, 20):  # the operator closes the pinch
        q = r.update(hand_landmarks(side, pinch=pinch))
    pinched_gap = thumb_index_m(r, settle(r, hand_landmarks(side, pinch=1.0)))
    assert pinched_gap < 0.03, f"{side}: Dex3 thumb and index tip points {pinched_gap * 1e3:.1f} mm apart in a pinch"
    assert open_gap > 0.06, f"{side}: {open_gap * 1e3:.1f} mm apart with the hand open"
    reopened = thumb_index_m(r, settle(r, hand_landmarks(side)))
    assert reopened > 0.06
    assert np.all(np.isfinite(q))


@pytest.mark.parametrize("side", SIDES)
def test_a_thumb_middle_pinch_closes_the_thumb_on_the_middle_finger(side):
    r = retargeter(side)
    settle(r, hand_landmarks(side))
    tips = r.kinematics.tips(settle(r, hand_landmarks(side, pinch=1.0, finger="middle")))
    to_index, to_middle = np.linalg.norm(tips[1:] - tips[0], axis=1)
    assert to_middle < 0.03 < to_index, f"{side}: thumb–middle {to_middle * 1e3:.1f} mm, thumb–index " \
                                        f"{to_index * 1e3:.1f} mm"


@pytest.mark.parametrize("side", SIDES)
def test_targets_stay_within_the_dex3_limits_whatever_the_landmarks(side):
    r = retargeter(side, low_pass_alpha=1.0)
    limits = DEX3.limits[side]
    rng = np.random.default_rng(7)
    reached = {"lower": 0, "upper": 0}
    for _ in range(200):
        q = r.update(hand_landmarks(side, curl=rng.uniform(), pinch=rng.uniform()) * rng.uniform(0.3, 3.0)
                     + rng.normal(scale=0.05, size=(25, 3)))
        assert np.all(q >= limits.q_lower) and np.all(q <= limits.q_upper), q
        reached["lower"] += int(np.any(np.isclose(q, limits.q_lower)))
        reached["upper"] += int(np.any(np.isclose(q, limits.q_upper)))
    assert reached["lower"] and reached["upper"]  # the wild hands pushed against the limits: they held


@pytest.mark.parametrize(("change", "message"), [
    (lambda p: p.__setitem__((THUMB_TIP, 1), np.nan), r"hand landmarks \[4\] are not finite"),
    (lambda p: p.__setitem__(slice(None), 0.0), "all zero"),
])
def test_unusable_landmarks_are_refused_with_the_reason_and_leave_the_output(change, message):
    r = retargeter("left")
    before = settle(r, hand_landmarks("left", pinch=1.0))
    bad = hand_landmarks("left")
    change(bad)
    with pytest.raises(HandLandmarksError, match=message):
        r.update(bad)
    with pytest.raises(HandLandmarksError, match=r"shape \(25, 3\)"):
        r.update(bad[:21])
    np.testing.assert_allclose(r.update(hand_landmarks("left", pinch=1.0)), before, atol=1e-3)


def test_the_filter_moves_a_share_of_the_way_and_the_solution_is_clipped():
    r = retargeter("left", low_pass_alpha=0.25)
    first = r.update(hand_landmarks("left"))
    solved = r.solve(hand_landmarks("left", curl=1.0))
    r.solution = first.copy()  # solve again from where the output is, as update does
    second = r.update(hand_landmarks("left", curl=1.0))
    np.testing.assert_allclose(second, first + 0.25 * (solved - first), atol=1e-9)


def test_the_right_hand_is_the_left_one_mirrored():
    left, right = Dex3Kinematics("left", DEX3.model), Dex3Kinematics("right", DEX3.model)
    q = np.array([0.3, 0.4, 0.8, -0.6, -0.7, -0.2, -1.0])  # left, motor order
    mirror = np.array([1.0 if j == "thumb_0" else -1.0 for j in DEX3.motor_order])
    np.testing.assert_allclose(right.tips(q * mirror), left.tips(q) * [1.0, -1.0, 1.0], atol=1e-12)
    open_tips = left.tips(np.zeros(7))
    assert open_tips[1, 0] == pytest.approx(0.0777 + 0.0458 + 0.06)  # index straight along the palm's x


def test_settings_and_joint_tables_are_checked():
    with pytest.raises(ValueError, match="pinch_near_m"):
        HandRetargetConfig(pinch_near_m=0.08, pinch_far_m=0.06)
    with pytest.raises(ValueError, match="low_pass_alpha"):
        HandRetargetConfig(low_pass_alpha=0.0)


def test_avp_and_pico_layouts_give_the_webxr_order():
    webxr = hand_landmarks("right", pinch=0.5)
    pico = np.vstack([[0.0, -0.05, 0.0], webxr])  # OpenXR: the palm first
    avp = np.vstack([webxr, [[0.0, 0.1, 0.0], [0.0, 0.3, 0.0]]])  # ARKit: forearm wrist and arm last
    np.testing.assert_array_equal(to_webxr_order(pico, "pico"), webxr)
    np.testing.assert_array_equal(to_webxr_order(avp, "avp"), webxr)
    with pytest.raises(ValueError, match=r"pico hand landmarks have shape \(26, 3\)"):
        to_webxr_order(webxr, "pico")
    with pytest.raises(ValueError, match="unknown hand landmark layout"):
        to_webxr_order(webxr, "quest")


@pytest.mark.parametrize("graph", ["real", "sim"])
def test_both_graphs_run_hand_retarget_with_dex3_only(graph):
    def names(**args) -> list[str]:
        return [node.name for node in load_graph(graph).resolve(args)]

    assert "hand_retarget" not in names()
    assert "hand_retarget" in names(dex3="true")


def test_the_hands_bench_reports_rates_and_pinch_gaps_per_hand():
    figures = bench_hands(cycles=1)
    for side in SIDES:
        assert figures[f"{side}_retargets_per_cpu_s"] > 0 and figures[f"{side}_retarget_p50_us"] > 0
        assert figures[f"{side}_pinch_thumb_index_max_mm"] < 30 < figures[f"{side}_open_thumb_index_min_mm"]
    assert figures["landmark_sets_per_hand"] == 200
