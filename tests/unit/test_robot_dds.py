"""The robot's DDS access: topic types, and a clear error for an interface that does not exist."""

import pytest

from g1_teleop.hardware.robot_dds import RobotDds, RobotDdsUnavailable, topic_type


@pytest.fixture
def sdk():
    pytest.importorskip("unitree_sdk2py", reason="unitree_sdk2py not installed (scripts/install_robot_sdk.sh)")


def test_topics_have_the_sdks_types(sdk):
    assert topic_type("rt/lowcmd").__name__ == "LowCmd_"
    assert topic_type("rt/dex3/right/state").__name__ == "HandState_"
    assert topic_type("rt/wirelesscontroller").__name__ == "WirelessController_"


def test_an_interface_that_does_not_exist_is_a_clear_error(sdk):
    with pytest.raises(RobotDdsUnavailable, match=r"cannot open the robot's DDS domain 229 on interface 'nosuch0'.*"
                                                  r"interfaces here: .*lo"):
        RobotDds(229, "nosuch0")
