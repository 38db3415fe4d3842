"""bench damping's pure parts: its options from the environment, what counts as a damping LowCmd, the bridge's
damping reasons, the figures of a kind's trials and the tap that finds the first damping LowCmd after a kill."""

import numpy as np
import pytest

from g1_teleop.core.limits import JointCommand
from g1_teleop.hardware.lowcmd import MODE_PR, NUM_BODY_JOINTS, lowcmd_to_cdr, motor_slots, pack_lowcmd
from g1_teleop.tools.bench.damping import (
    PRIORITY_ENV,
    STATE_TIMEOUT_ENV,
    TRIALS,
    TRIALS_ENV,
    DampingOptions,
    _LowCmdTap,
    damp_age_s,
    damp_reason,
    damping_figures,
    is_damping,
    longest_gap_s,
)

KD = np.full(NUM_BODY_JOINTS, 0.05)


def cdr(command: JointCommand) -> bytes:
    return lowcmd_to_cdr(pack_lowcmd(MODE_PR, 5, **motor_slots(command))[0])


DAMPING = cdr(JointCommand.damping(NUM_BODY_JOINTS, KD))
ZERO_TORQUE = cdr(JointCommand.damping(NUM_BODY_JOINTS, 0.0))
HOLD = cdr(JointCommand.hold(np.zeros(NUM_BODY_JOINTS), np.full(NUM_BODY_JOINTS, 40.0), KD))


def test_options_default_to_twenty_trials_and_the_shipped_state_timeout():
    assert DampingOptions.from_env({}) == DampingOptions(TRIALS, None) and TRIALS == 20
    assert DampingOptions.from_env({TRIALS_ENV: " 3 ", STATE_TIMEOUT_ENV: "0.25", PRIORITY_ENV: "50"}) == \
        DampingOptions(3, 0.25, 50)
    assert DampingOptions.from_env({TRIALS_ENV: "", STATE_TIMEOUT_ENV: ""}) == DampingOptions()


@pytest.mark.parametrize(("env", "message"), [({TRIALS_ENV: "many"}, TRIALS_ENV + "='many': give a whole number"),
                                              ({TRIALS_ENV: "0"}, "positive number of trials"),
                                              ({STATE_TIMEOUT_ENV: "-1"}, "positive number of seconds")])
def test_bad_options_name_the_variable(env, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        DampingOptions.from_env(env)


def test_damping_is_no_stiffness_with_the_damping_profiles_kd():
    assert is_damping(DAMPING, KD)
    assert not is_damping(ZERO_TORQUE, KD)  # ZERO_TORQUE: kp 0 but no damping either
    assert not is_damping(HOLD, KD)


def test_the_bridges_reasons_for_damping():
    assert damp_reason("[hw_bridge] ACTIVE → DAMP: no valid joint_command for 0.502 s (grace 0.500 s)") == "grace"
    assert damp_reason("[hw_bridge] ACTIVE → DAMP: no valid joint_command for 0.050 s (limit 0.045 s) and no "
                       "publisher left on joint_command") == "source_gone"
    assert damp_reason("[hw_bridge] ACTIVE → DAMP: LowState 0.130 s old (limit 0.100 s)") == "lowstate"
    assert damp_reason("[hw_bridge] ACTIVE → DAMP: operator e-stop (service)") == "other"


def test_the_age_the_bridge_damped_at_and_the_longest_lowcmd_gap():
    assert damp_age_s("[hw_bridge] safety: ACTIVE → DAMP: no valid joint_command for 0.502 s (grace 0.500 s)") \
        == 0.502
    assert damp_age_s("[hw_bridge] safety: ACTIVE → DAMP: LowState 0.130 s old (limit 0.100 s)") is None
    assert longest_gap_s([1.0, 1.002, 1.1, 1.102]) == pytest.approx(0.098)
    assert longest_gap_s([1.0]) is None


def test_figures_count_the_trials_within_grace_plus_50_ms():
    figures = damping_figures("kill", [0.49, 0.51, 0.549, 0.56, None], ["grace"] * 3 + ["lowstate", "other"], 0.5)
    assert figures == {"kill_trials": 5, "kill_within_grace_plus_50ms": 3, "kill_without_damping": 1,
                       "kill_to_damping_p50_ms": 529.5, "kill_to_damping_min_ms": 490.0,
                       "kill_to_damping_max_ms": 560.0, "kill_damped_on_grace": 3, "kill_damped_on_source_gone": 0,
                       "kill_damped_on_lowstate": 1, "kill_damped_on_other": 1}
    assert "stop_to_damping_p50_ms" not in damping_figures("stop", [None], ["other"], 0.5)
    late = damping_figures("stop", [0.6, 0.5], ["grace"] * 2, 0.5, ages_s=[0.502, None], gaps_s=[0.1, 0.004])
    assert late["stop_bridge_damp_age_max_ms"] == 502.0 and late["stop_lowcmd_gap_max_ms"] == 100.0


class FakeDds:
    def raw_reader(self, topic, on_samples):
        self.topic, self.deliver = topic, on_samples


def test_the_tap_keeps_samples_only_while_armed_and_finds_the_first_damping_after_the_kill():
    dds = FakeDds()
    tap = _LowCmdTap(dds)
    assert dds.topic == "rt/lowcmd"
    dds.deliver([DAMPING], 0.5)
    assert tap.samples == []  # not armed: nothing kept
    tap.arm()
    dds.deliver([DAMPING], 0.9)  # before the kill (at 1.0): not this one
    dds.deliver([HOLD, HOLD], 1.2)
    assert tap.first_damping(1.0, KD) is None
    dds.deliver([ZERO_TORQUE, DAMPING], 1.5)
    dds.deliver([DAMPING], 1.6)
    assert tap.first_damping(1.0, KD) == 1.5 and not tap.armed
    dds.deliver([DAMPING], 1.7)
    assert len(tap.samples) == 6
