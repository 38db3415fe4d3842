"""retarget's parameters: each described, the clutch chosen by the source when not given (operator for a live
headset, auto for scenarios and bags), the clutch's settings passed through and checked."""

from __future__ import annotations

import dataclasses

import pytest

from g1_teleop.core.settings import constraint_of
from g1_teleop.retarget.clutch import ClutchConfig
from g1_teleop.retarget.retarget_settings import RetargetSettings


def test_every_parameter_is_described_and_the_defaults_are_legal() -> None:
    config = RetargetSettings()
    for field in dataclasses.fields(config):
        constraint = constraint_of(field)
        assert constraint is not None and constraint.description, field.name


@pytest.mark.parametrize(("clutch", "source", "mode"), [
    ("", "scenario", "auto"), ("", "bag", "auto"), ("", "webxr", "operator"),
    ("auto", "webxr", "auto"), ("operator", "scenario", "operator"),
])
def test_the_clutch_follows_the_source_unless_given(clutch: str, source: str, mode: str) -> None:
    assert RetargetSettings(clutch=clutch, source=source).clutch_mode() == mode


def test_the_clutch_settings_pass_through_and_are_checked() -> None:
    config = RetargetSettings(stale_after_s=0.3, home_after_s=3.0, home_speed_m_s=0.05)
    assert config.clutch_config() == ClutchConfig(stale_after_s=0.3, home_after_s=3.0, home_speed_m_s=0.05)
    with pytest.raises(ValueError, match=r"home_after_s \(0.2 s\) must be longer than stale_after_s"):
        RetargetSettings(home_after_s=0.2)
    with pytest.raises(ValueError, match="clutch must be one of , auto, operator, got 'manual'"):
        RetargetSettings(clutch="manual")
    with pytest.raises(ValueError, match="source must be one of scenario, bag, webxr"):
        RetargetSettings(source="headset")
