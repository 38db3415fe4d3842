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


def test_a_deep_reader_takes_every_sample_with_its_write_time(sdk):
    """What the soak counts LowCmds with: 40 written in a burst, all taken, oldest first, each timed by its writer."""
    import time

    from g1_teleop.core.limits import JointCommand
    from g1_teleop.hardware.lowcmd import NUM_BODY_JOINTS, LowCmdEncoder
    from g1_teleop.hardware.robot_dds import TOPIC_LOWCMD

    dds = RobotDds(187, "lo")
    try:
        reader, writer = dds.raw_reader(TOPIC_LOWCMD, history=100), dds.raw_writer(TOPIC_LOWCMD)
        encoder, q = LowCmdEncoder(), JointCommand.damping(NUM_BODY_JOINTS, 1.0)
        deadline = time.monotonic() + 5.0
        while time.monotonic() < deadline:  # until the two have matched: a sample written gets through
            writer.write(encoder.encode(q, mode_machine=5))
            time.sleep(0.05)
            if reader.take_timed():
                break
        before = time.time()
        samples = []
        for i in range(40):
            q.q[0] = i
            samples.append(encoder.encode(q, mode_machine=5))
            writer.write(samples[-1])
        after = time.time()
        taken: list[tuple[bytes, float]] = []
        while len(taken) < 40 and time.monotonic() < deadline:
            taken += reader.take_timed()
            time.sleep(0.01)
    finally:
        dds.close()
    assert [data for data, _ in taken] == samples
    times = [t for _, t in taken]
    assert before - 1e-3 <= times[0] and times[-1] <= after + 1e-3 and times == sorted(times)
