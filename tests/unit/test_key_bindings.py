"""The keyboard teleop's key map (ROS-free): velocities in the pelvis frame within the policy's limits,
latching, stops and requests."""

import pytest

from g1_teleop.tools.key_bindings import MAX_SPEED, MIN_SPEED, KeyCommand, Request, apply_key, split_keys


def press(*keys: str, command: KeyCommand | None = None) -> tuple[KeyCommand, list[Request | None]]:
    command = command or KeyCommand()
    requests = []
    for key in keys:
        command, request = apply_key(command, key)
        requests.append(request)
    return command, requests


@pytest.mark.parametrize(("key", "velocity"), [
    ("i", (0.2, 0.0, 0.0)), (",", (-0.2, 0.0, 0.0)),  # forward, back
    ("j", (0.0, 0.0, 0.2)), ("l", (0.0, 0.0, -0.2)),  # turn left (+z), right
    ("u", (0.2, 0.0, 0.2)), ("o", (0.2, 0.0, -0.2)),
    ("J", (0.0, 0.2, 0.0)), ("L", (0.0, -0.2, 0.0)),  # strafe left (+y), right
    ("U", (0.2, 0.2, 0.0)), (">", (-0.2, -0.2, 0.0)),
])
def test_movement_keys_give_the_pelvis_frame_velocity(key, velocity) -> None:
    command, requests = press(key)
    assert command.velocity == pytest.approx(velocity)
    assert requests == [None]


def test_a_movement_latches_until_a_stop_or_any_other_key() -> None:
    for stop in ("k", "K", " ", "z", "\x1b"):
        command, _ = press("i", "+", stop)
        assert command.velocity == (0.0, 0.0, 0.0), stop
        assert command.linear_speed == pytest.approx(0.25), "a stop keeps the speed setting"
    command, _ = press("i", "+")
    assert command.velocity == pytest.approx((0.25, 0.0, 0.0)), "a speed key keeps the motion"


def test_speeds_stay_within_the_policy_limits_and_above_its_dead_band() -> None:
    command, _ = press("u", *["+"] * 10)
    assert command.linear_speed == MAX_SPEED and command.angular_speed == MAX_SPEED
    assert command.velocity == pytest.approx((0.3, 0.0, 0.3))
    command, _ = press("u", *["-"] * 10)
    assert command.velocity == pytest.approx((MIN_SPEED, 0.0, MIN_SPEED))
    assert KeyCommand((1, -1, 1), linear_speed=2.0, angular_speed=5.0).velocity == (0.3, -0.3, 0.3)


def test_mode_keys_request_and_keep_the_motion_e_stop_and_quit_stop_it() -> None:
    command, requests = press("i", "1", "2")
    assert requests == [None, Request.SQUAT, Request.LOCOMOTION]
    assert command.velocity == pytest.approx((0.2, 0.0, 0.0))
    for key, request in (("e", Request.ESTOP), ("q", Request.QUIT), ("\x03", Request.QUIT)):
        command, requests = press("i", key)
        assert requests[-1] is request and command.velocity == (0.0, 0.0, 0.0)
    assert {r.value for r in (Request.SQUAT, Request.LOCOMOTION, Request.ESTOP)} == {"squat", "locomotion", "estop"}


def test_arrow_keys_and_several_keys_in_one_read() -> None:
    assert split_keys("\x1b[Ai\x1b[D,\x1b[B\x1b[C") == ["i", "i", "j", ",", ",", "l"]
    assert split_keys("\x1bq") == ["\x1b", "q"]
    assert split_keys("") == []
