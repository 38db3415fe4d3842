"""retarget's joint-state answers in real time (retarget/state_answers.py): none while the operator's samples are
answered, each state the node takes (rate_hz a second) once they stop."""

from __future__ import annotations

import numpy as np
import pytest

from g1_teleop.retarget.state_answers import StateAnswers

RATE_HZ = 50.0  # the node takes the newest joint state this often
SAMPLE_DT = 1 / 60  # a scenario's operator samples


def answered_states(answers: StateAnswers, start_s: float, end_s: float, sample_dt: float | None,
                    samples: list[float] | None = None) -> list[float]:
    """The joint states (times, s) taken at RATE_HZ and answered between start_s and end_s; operator samples every
    ``sample_dt`` s in between (None: none), appended to ``samples``."""
    states = []
    next_sample = start_s
    for t in np.arange(start_s, end_s, 1.0 / RATE_HZ):
        while sample_dt is not None and next_sample <= t:
            answers.sample(next_sample)
            if samples is not None:
                samples.append(next_sample)
            next_sample += sample_dt
        if answers.due(t):
            states.append(float(t))
    return states


def test_no_state_is_answered_while_samples_come_and_each_taken_one_after() -> None:
    answers, samples = StateAnswers(RATE_HZ), []
    assert answered_states(answers, 0.0, 1.99, SAMPLE_DT, samples) == []
    assert samples[-1] == pytest.approx(118 * SAMPLE_DT)  # 1.967 s
    after = answered_states(answers, 1.98, 4.0, None)  # the operator vanished: hold, then home
    assert after[0] == 2.0 and len(after) == 100  # 1.5 periods (30 ms) after the last sample, and each one on
    assert np.allclose(np.diff(after), 0.02)


def test_samples_slower_than_the_window_leave_states_answered_between_them() -> None:
    answers, samples = StateAnswers(RATE_HZ), []  # a 20 Hz sample stream: 50 ms apart, the window is 30 ms
    states = answered_states(answers, 0.0, 1.0, 0.05, samples)
    assert 15 <= len(states) <= 25
    for t in states:
        assert t - max(s for s in samples if s <= t) >= 0.03
