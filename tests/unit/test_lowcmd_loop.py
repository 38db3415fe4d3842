"""What a service tells the operator about its request, from the tick of the LowCmd loop that handled it."""

from g1_teleop.hardware.bridge_link import Answer, Request
from g1_teleop.hardware.bridge_safety import (
    ActionRefused,
    OperatorAction,
    OperatorEvent,
    SafetyOutput,
    SafetyState,
    Transition,
    WritingResumed,
)
from g1_teleop.hardware.lowcmd_loop import answer

START = OperatorEvent(OperatorAction.START, "service")
S = SafetyState


def test_a_refusal_of_this_request_is_the_answer():
    other = ActionRefused(OperatorEvent(OperatorAction.START, "wireless remote"), "an e-stop arrived in the same tick")
    mine = ActionRefused(START, "only from ZERO_TORQUE or DAMP (now HOLD)")
    output = SafetyOutput(None, (), (WritingResumed(), other, mine))
    assert answer(Request(START, 7), output, S.HOLD) == \
        Answer(7, False, "start from service refused: only from ZERO_TORQUE or DAMP (now HOLD)")


def test_otherwise_the_transitions_or_the_state_it_is_already_in():
    ramp = Transition(1.0, S.ZERO_TORQUE, S.RAMP, "operator start (service)")
    assert answer(Request(START, 3), SafetyOutput(None, (ramp,)), S.RAMP) == \
        Answer(3, True, "ZERO_TORQUE → RAMP: operator start (service)")
    estop = Request(OperatorEvent(OperatorAction.ESTOP, "service"), 4)
    assert answer(estop, SafetyOutput(None), S.DAMP) == Answer(4, True, "already DAMP")
