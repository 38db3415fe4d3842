"""hw_bridge's configuration: its parameters' legal values, said at load, and what they name checked before a
process starts."""

import dataclasses

import pytest

from g1_teleop.core.settings import constraint_of
from g1_teleop.hardware.bridge_config import HwBridgeConfig, load_setup
from g1_teleop.hardware.bridge_safety import BridgeSafetyConfig, OperatorAction


def test_defaults_are_legal_and_every_parameter_is_described():
    HwBridgeConfig()
    for field in dataclasses.fields(HwBridgeConfig):
        assert constraint_of(field) is not None and constraint_of(field).description, field.name
    assert constraint_of(next(f for f in dataclasses.fields(HwBridgeConfig)
                              if f.name == "robot_domain_id")).text() == "in [0, 232]"


@pytest.mark.parametrize(("field", "value", "message"), [
    ("robot_domain_id", 233, r"robot_domain_id must be in \[0, 232\], got 233"),
    ("lowcmd_rate_hz", 0.0, r"lowcmd_rate_hz must be > 0; <= 2000, got 0.0"),
    ("dex3_rate_hz", 2500.0, r"dex3_rate_hz must be > 0; <= 2000"),
    ("lowcmd_priority", 100, r"lowcmd_priority must be in \[0, 99\]"),
    ("joy_estop_button", -2, r"joy_estop_button must be >= -1"),
    ("network_interface", "", r"network_interface is empty"),
    ("activate_combo", "L1+Z", r"activate_combo: button combination 'L1\+Z': unknown buttons \['Z'\]"),
])
def test_illegal_values_name_the_parameter(field, value, message):
    with pytest.raises(ValueError, match=message):
        HwBridgeConfig(**{field: value})


def test_combinations_and_joy_buttons_by_action():
    config = HwBridgeConfig(start_combo="L1+B", joy_estop_button=3)
    assert config.combos()[OperatorAction.START] == frozenset({"L1", "B"})
    assert config.joy_buttons() == {OperatorAction.ESTOP: 3}


def test_what_the_parameters_name_is_checked_before_a_process_starts():
    setup = load_setup(HwBridgeConfig(), BridgeSafetyConfig())
    assert setup.dex3 is None and setup.bridge == HwBridgeConfig()
    assert load_setup(HwBridgeConfig(dex3=True), BridgeSafetyConfig()).dex3 is not None
    with pytest.raises(ValueError, match="unknown gain profile 'stiff'"):
        load_setup(HwBridgeConfig(gain_profile="stiff"), BridgeSafetyConfig())
    with pytest.raises(ValueError, match="unknown gain profile 'soft'"):
        load_setup(HwBridgeConfig(), BridgeSafetyConfig(hold_gain_profile="soft"))
    with pytest.raises(ValueError, match="cannot read"):
        load_setup(HwBridgeConfig(dex3=True, dex3_config="/nonexistent/dex3.yaml"), BridgeSafetyConfig())
