"""retarget's joint-state answers in real time (retarget/state_answers.py): none while the operator's samples are
answered, at most rate_hz a second once they stop."""

from __future__ import annotations

import numpy as np

from g1_teleop.retarget.state_answers import StateAnswers

STATE_DT = 0.005  # joint_states at 200 Hz
SAMPLE_DT = 1 / 60  # a scenario's operator samples


def answered_states(answers: StateAnswers, start_s: float, end_s: float, samples: bool) -> list[float]:
    """The joint states (times, s) answered between start_s and end_s; with ``samples``, operator samples at 60 Hz
    in between."""
    states = []
    next_sample = start_s
    for t in np.arange(start_s, end_s, STATE_DT):
        while samples and next_sample <= t:
            answers.sample(next_sample)
            next_sample += SAMPLE_DT
        if answers.due(t):
            states.append(float(t))
    return states


def test_no_state_is_answered_while_samples_come_and_fifty_a_second_after() -> None:
    answers = StateAnswers(50.0)
    assert answered_states(answers, 0.0, 2.0, samples=True) == []
    after = answered_states(answers, 2.0, 4.0, samples=False)  # the operator vanished: hold, then home
    assert 97 <= len(after) <= 102 and after[0] <= 2.0 + 0.03 + 1e-9  # from 1.5 periods after the last sample
    assert np.isclose(np.median(np.diff(after)), 0.02)


def test_states_alone_are_answered_at_the_rate() -> None:
    answers = StateAnswers(50.0)
    states = answered_states(answers, 10.0, 12.0, samples=False)
    # (50 a second on average: the decimator lets the first ones after a gap come closer, as before this gate)
    assert 99 <= len(states) <= 102 and np.isclose(np.median(np.diff(states)), 0.02)
