import numpy as np
import pytest
import yaml

from g1_teleop.core.dex3_description import Dex3ConfigError, load_dex3
from g1_teleop.core.limits import JointCommand
from g1_teleop.core.paths import config_path
from g1_teleop.hardware.bridge_safety import SafetyState
from g1_teleop.hardware.dex3 import (
    HandSafety,
    HandSample,
    HandTarget,
    hand_cmd_message,
    hand_motor_mode,
    hand_state_arrays,
)
from g1_teleop.tools.dex3_emulator import EmulatedHand

S = SafetyState
TICK = 0.01  # 100 Hz


@pytest.fixture(scope="module")
def dex3():
    return load_dex3()


@pytest.fixture
def sdk():
    """The hand messages are the SDK's IDL types."""
    pytest.importorskip("unitree_sdk2py", reason="unitree_sdk2py not installed (scripts/install_robot_sdk.sh)")


def test_description_from_the_official_figures(dex3):
    assert dex3.joint_names("left")[0] == "left_hand_thumb_0_joint"
    assert dex3.joint_names("right")[6] == "right_hand_middle_1_joint"
    left, right = dex3.limits["left"], dex3.limits["right"]
    assert (left.q_lower[2], left.q_upper[2]) == (0.0, 1.74533)  # thumb_2 closes positive on the left
    assert (right.q_lower[2], right.q_upper[2]) == (-1.74533, 0.0)  # and negative on the right
    assert left.effort[0] == 2.45 and left.effort[1] == 1.4 and left.velocity[0] == 6.857
    assert (dex3.kp, dex3.kd) == (1.5, 0.2)


@pytest.mark.parametrize(("change", "message"), [
    (lambda raw: raw.pop("gains"), "missing key(s) gains"),
    (lambda raw: raw["motor_order"].pop(), "motor_order: expected 7 distinct joint names"),
    (lambda raw: raw["joints"]["index_0"].update(left=[-1.5, -0.1]), "joints.index_0.left: must contain 0"),
    (lambda raw: raw["joints"]["thumb_0"].update(effort=0), "joints.thumb_0.effort: must be > 0"),
    (lambda raw: raw["hand_model"]["links"]["thumb_0"].update(parent="thumb_1"),
     "hand_model.links.thumb_0.parent: must be palm or a joint listed before thumb_0"),
    (lambda raw: raw["hand_model"]["links"]["index_1"].update(axis="w"), "hand_model.links.index_1.axis: must be one"),
    (lambda raw: raw["hand_model"]["wrist_with_hand"].update(inertia_quat=[1, 1, 0, 0]),
     "hand_model.wrist_with_hand.inertia_quat: must be a unit quaternion"),
])
def test_configuration_errors_name_the_key(tmp_path, change, message):
    raw = yaml.safe_load(config_path("dex3.yaml").read_text())
    change(raw)
    path = tmp_path / "dex3.yaml"
    path.write_text(yaml.safe_dump(raw))
    with pytest.raises(Dex3ConfigError, match=f"{path}: .*") as info:
        load_dex3(path)
    assert message in str(info.value)


def test_motor_mode_bits():
    assert hand_motor_mode(0) == 0x10
    assert hand_motor_mode(3) == 0x13  # id in bits 0–3, status 1 in bits 4–6
    assert hand_motor_mode(6, timeout=True) == 0x96  # timeout in bit 7
    with pytest.raises(ValueError):
        hand_motor_mode(7)


def test_hand_cmd_message_carries_the_command_in_motor_order(sdk):
    q = np.arange(7) * 0.1
    message = hand_cmd_message(JointCommand(q=q, dq=q + 1, tau_ff=q + 2, kp=np.full(7, 1.5), kd=np.full(7, 0.2)))
    assert len(message.motor_cmd) == 7 and list(message.reserve) == [0, 0, 0, 0]
    assert [m.mode for m in message.motor_cmd] == [0x10 + i for i in range(7)]
    assert message.motor_cmd[4].q == pytest.approx(0.4) and message.motor_cmd[4].dq == pytest.approx(1.4)
    assert message.motor_cmd[4].tau == pytest.approx(2.4) and message.motor_cmd[4].kp == 1.5


class Hand:
    def __init__(self, dex3, side="left"):
        self.dex3 = dex3
        self.safety = HandSafety(dex3, side)
        self.t = 10.0
        self.q = np.array([0.2, 0.1, 0.5, -0.3, -0.3, -0.3, -0.3])  # measured, inside the left hand's limits
        self.target = None

    def tick(self, body, fresh=True):
        self.t += TICK
        sample = HandSample(self.t - (0.0 if fresh else 1.0), self.q, np.zeros(7))
        return self.safety.step(self.t, body, sample, self.target)


def test_nothing_is_written_without_a_fresh_hand_state(dex3):
    hand = Hand(dex3)
    assert hand.safety.step(1.0, S.ACTIVE, None, None) is None
    assert hand.tick(S.HOLD, fresh=False) is None


def test_zero_torque_and_damp_follow_the_body(dex3):
    hand = Hand(dex3)
    free = hand.tick(S.ZERO_TORQUE)
    np.testing.assert_array_equal(free.kp, 0.0)
    np.testing.assert_array_equal(free.kd, 0.0)
    damped = hand.tick(S.DAMP)
    np.testing.assert_array_equal(damped.kp, 0.0)
    np.testing.assert_array_equal(damped.kd, dex3.damping_kd)


def test_hold_opens_the_hand_at_the_slew_limit(dex3):
    hand = Hand(dex3)
    hand.tick(S.ZERO_TORQUE)
    step = dex3.slew_velocity_scale * dex3.limits["left"].velocity * TICK
    out = hand.tick(S.HOLD)
    np.testing.assert_allclose(out.q, hand.q - np.sign(hand.q) * np.minimum(step, np.abs(hand.q)))
    assert np.all(out.kp == dex3.kp) and np.all(out.kd == dex3.kd)
    for _ in range(100):
        out = hand.tick(S.HOLD)
    # The hand did not move; the open pose is within the torque bound (effort/kp ≥ 0.93 rad) of it.
    np.testing.assert_allclose(out.q, 0.0)
    assert np.all(np.abs(dex3.kp * (out.q - hand.q)) <= dex3.limits["left"].effort + 1e-12)


def test_active_follows_fresh_targets_and_holds_stale_ones(dex3):
    hand = Hand(dex3)
    hand.tick(S.HOLD)
    closed = np.array([0.0, 0.5, 1.0, -1.0, -1.0, -1.0, -1.0])
    hand.target = HandTarget(hand.t, closed)
    for _ in range(60):
        hand.q = hand.tick(S.ACTIVE).q  # a hand that follows its target exactly
        hand.target = HandTarget(hand.t, closed)
    np.testing.assert_allclose(hand.q, closed)
    hand.target = HandTarget(hand.t - dex3.command_timeout_s - 0.1, np.zeros(7))  # stale: not followed
    np.testing.assert_allclose(hand.tick(S.ACTIVE).q, closed)


def test_targets_stay_inside_the_hands_limits(dex3):
    hand = Hand(dex3, side="right")
    hand.q = np.zeros(7)
    for _ in range(200):
        hand.target = HandTarget(hand.t, np.full(7, -3.0))
        hand.q = hand.tick(S.ACTIVE).q
    np.testing.assert_allclose(hand.q, dex3.limits["right"].q_lower)


def test_the_stiffness_torque_is_bounded(dex3):
    hand = Hand(dex3)
    hand.q = np.zeros(7)  # a hand blocked open
    for _ in range(200):
        hand.target = HandTarget(hand.t, np.array([1.0, 0.9, 1.7, -1.5, -1.7, -1.5, -1.7]))
        out = hand.tick(S.ACTIVE)
    torque = dex3.kp * (out.q - hand.q)
    assert np.all(np.abs(torque) <= dex3.limits["left"].effort + 1e-12)
    assert np.isclose(abs(torque[0]), 1.0 * dex3.kp)  # thumb_0 (effort 2.45) is not held back at 1 rad


def test_emulated_hand_tracks_with_the_pd_time_constant(dex3, sdk):
    hand = EmulatedHand(dex3.limits["left"])
    target = np.array([0.5, 0.5, 1.0, -1.0, -1.0, -1.0, -1.0])
    hand.receive(hand_cmd_message(JointCommand.hold(target, np.full(7, 1.5), np.full(7, 0.2))))
    for _ in range(int(0.133 / 0.002)):  # about kd/kp: an overdamped finger gets ~63 % of the way
        hand.advance(0.002)
    assert np.all((np.abs(hand.q) > 0.5 * np.abs(target)) & (np.abs(hand.q) < 0.75 * np.abs(target)))
    for _ in range(1000):
        hand.advance(0.002)
    np.testing.assert_allclose(hand.q, target, atol=1e-3)
    q, dq, tau = hand_state_arrays(hand.state_message())
    np.testing.assert_allclose(q, target, atol=1e-3)
    np.testing.assert_allclose(dq, 0.0, atol=1e-3)
    np.testing.assert_allclose(tau, 0.0, atol=1e-3)  # at rest on target: no torque


def test_emulated_hand_rejects_bad_commands(dex3, sdk):
    hand = EmulatedHand(dex3.limits["left"])
    good = hand_cmd_message(JointCommand.hold(np.full(7, 0.0), np.full(7, 1.5), np.full(7, 0.2)))
    short = hand_cmd_message(JointCommand.hold(np.zeros(7), np.ones(7), np.ones(7)))
    short.motor_cmd = short.motor_cmd[:6]
    swapped = hand_cmd_message(JointCommand.hold(np.zeros(7), np.ones(7), np.ones(7)))
    swapped.motor_cmd[3].mode, swapped.motor_cmd[5].mode = hand_motor_mode(5), hand_motor_mode(3)
    nan = hand_cmd_message(JointCommand.hold(np.zeros(7), np.ones(7), np.ones(7)))
    nan.motor_cmd[2].q = float("nan")
    for message in (good, short, swapped, nan):
        hand.receive(message)
    assert (hand.counts.applied, hand.counts.malformed, hand.counts.non_finite) == (1, 2, 1)
    np.testing.assert_array_equal(hand.command.kp, 1.5)  # the good one stays applied


def test_hand_state_needs_seven_motors(dex3, sdk):
    message = EmulatedHand(dex3.limits["left"]).state_message()
    message.motor_state = message.motor_state[:5]
    with pytest.raises(ValueError, match="5 motor states"):
        hand_state_arrays(message)
