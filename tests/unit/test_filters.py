"""WeightedMovingFilter: OpenWBT's output filter of the arm IK (newest sample weighted 0.4)."""

from __future__ import annotations

import numpy as np
import pytest

from g1_teleop.core.filters import WeightedMovingFilter


def test_returns_the_raw_sample_until_the_window_is_full() -> None:
    f = WeightedMovingFilter()
    assert f.value is None
    for x in (1.0, 2.0, 3.0):
        assert f.update(np.array([x])) == pytest.approx([x])


def test_weights_the_newest_sample_first_and_slides() -> None:
    f = WeightedMovingFilter((0.4, 0.3, 0.2, 0.1))
    for x in (1.0, 2.0, 3.0):
        f.update(np.array([x]))
    # 0.4·4 + 0.3·3 + 0.2·2 + 0.1·1
    assert f.update(np.array([4.0])) == pytest.approx([3.0])
    # the oldest sample (1) leaves: 0.4·5 + 0.3·4 + 0.2·3 + 0.1·2
    assert f.update(np.array([5.0])) == pytest.approx([4.0])
    assert f.value == pytest.approx([4.0])


def test_filters_each_element_of_a_vector() -> None:
    f = WeightedMovingFilter((0.5, 0.5))
    f.update(np.array([0.0, 10.0]))
    assert f.update(np.array([2.0, 20.0])) == pytest.approx([1.0, 15.0])


def test_skips_a_sample_equal_to_the_newest() -> None:
    with_repeat, without = WeightedMovingFilter(), WeightedMovingFilter()
    for x in (1.0, 2.0, 3.0, 4.0):
        with_repeat.update(np.array([x]))
        without.update(np.array([x]))
    assert with_repeat.update(np.array([4.0])) == pytest.approx([3.0])  # unchanged, not 0.4·4 + 0.3·4 + …
    assert with_repeat.update(np.array([5.0])) == pytest.approx(without.update(np.array([5.0])))


def test_reset_forgets_the_history() -> None:
    f = WeightedMovingFilter((0.5, 0.5))
    f.update(np.array([0.0]))
    f.reset()
    assert f.value is None
    assert f.update(np.array([8.0])) == pytest.approx([8.0])


def test_results_are_copies() -> None:
    f = WeightedMovingFilter((1.0,))
    sample = np.array([1.0, 2.0])
    out = f.update(sample)
    out[0] = 99.0
    sample[1] = 99.0
    assert f.value == pytest.approx([1.0, 2.0])


def test_rejects_a_sample_of_another_shape() -> None:
    f = WeightedMovingFilter()
    f.update(np.zeros(14))
    with pytest.raises(ValueError, match=r"sample shape \(7,\) differs from the filter's \(14,\)"):
        f.update(np.zeros(7))


@pytest.mark.parametrize(
    ("weights", "message"),
    [
        ((), "non-empty"),
        ((0.5, 0.4), "must sum to 1"),
        ((1.2, -0.2), "positive finite"),
        ((float("nan"), 1.0), "positive finite"),
    ],
)
def test_rejects_bad_weights(weights: tuple[float, ...], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        WeightedMovingFilter(weights)
