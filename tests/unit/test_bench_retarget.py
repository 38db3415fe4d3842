"""`g1-teleop bench retarget`'s whole-body section on a short run: its figures exist and say what they should (the
exact round trip met by both solvers, the noisy one not, our clearance kept)."""

from g1_teleop.tools.bench.hands import bench_hands
from g1_teleop.tools.bench.retarget import SECTIONS, bench_whole_body


def test_whole_body_section_compares_ours_and_mink():
    figures = bench_whole_body(rate_hz=10.0)
    assert figures["frames"] == 180
    for solver in ("", "mink_"):
        assert figures[f"exact_{solver}joint_err_p95_rad"] <= 0.05
        assert figures[f"exact_{solver}body_pos_err_p95_m"] <= 0.03
        assert figures[f"noisy_{solver}body_pos_err_p95_m"] > 10 * figures[f"exact_{solver}body_pos_err_p95_m"]
        assert figures[f"noisy_{solver}fps"] > 0.0
    assert figures["exact_clearance_min_m"] >= 0.01 - 1e-6 and figures["noisy_clearance_min_m"] >= 0.01 - 1e-6
    assert figures["exact_ours_over_mink_fps"] > 0.0


def test_the_hands_are_a_section_of_their_own():
    assert SECTIONS["hands"] is bench_hands  # bench retarget prints hands_… beside whole_body_…
