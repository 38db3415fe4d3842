"""Declared settings: one declaration gives the check, the error text and the ROS descriptor's words."""

from dataclasses import dataclass

import pytest

from g1_teleop.core.settings import check_settings, constraint_of, setting


@dataclass(frozen=True)
class Example:
    period_s: float = setting(0.02, "control period (s)", positive=True)
    gain: float = setting(0.5, "blend factor", minimum=0.0, maximum=1.0)
    mode: str = setting("pose", "operator input", choices=("pose", "gamepad"))
    axes: tuple[int, ...] = setting([1, 4], "stick axes (height, pitch)", length=2, minimum=0)

    def __post_init__(self) -> None:
        check_settings(self)


def test_defaults_are_legal_and_lists_become_tuples() -> None:
    assert Example().axes == (1, 4)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"period_s": 0.0}, r"period_s must be > 0, got 0.0"),
        ({"gain": 1.5}, r"gain must be in \[0, 1\], got 1.5"),
        ({"gain": float("nan")}, r"gain must be finite"),
        ({"mode": "joystick"}, r"mode must be one of pose, gamepad, got 'joystick'"),
        ({"axes": (1, 2, 3)}, r"axes needs 2 values, got 3"),
        ({"axes": (1, -2)}, r"axes must be >= 0"),
        ({"period_s": True}, r"period_s must be a number, got True"),
        ({"mode": 3}, r"mode must be text, got 3"),
        ({"axes": (1, 2.5)}, r"axes must be a whole number, got 2.5"),
    ],
)
def test_illegal_values_name_the_field(kwargs, message) -> None:
    with pytest.raises(ValueError, match=message):
        Example(**kwargs)


def test_the_constraint_in_words() -> None:
    import dataclasses

    fields = {f.name: constraint_of(f) for f in dataclasses.fields(Example)}
    assert fields["period_s"].text() == "> 0"
    assert fields["gain"].text() == "in [0, 1]"
    assert fields["mode"].text() == "one of pose, gamepad"
    assert fields["period_s"].description == "control period (s)" and fields["period_s"].read_only
