"""The link between hw_bridge's two processes: whole messages in order, no waiting on a full buffer, a
clear end when the other side goes."""

from __future__ import annotations

import numpy as np
import pytest

from g1_teleop.hardware.bridge_link import Answer, Link, LinkClosed, RobotState, Stop


@pytest.fixture
def pair():
    ours, theirs = Link.pair()
    other = Link(theirs)
    yield ours, other
    ours.close()
    other.close()


def test_messages_arrive_whole_and_in_order(pair):
    ours, other = pair
    q = np.linspace(-1.0, 1.0, 29)
    assert ours.send(RobotState(q, -q, 2 * q, None, None))
    assert ours.send(Answer(7, False, "activate from service refused: only from HOLD"))
    state, answer = other.receive(1.0), other.receive(1.0)
    np.testing.assert_array_equal(state.q, q)
    np.testing.assert_array_equal(state.tau, 2 * q)
    assert answer == Answer(7, False, "activate from service refused: only from HOLD")
    assert other.receive(timeout_s=0) is None  # nothing more: no wait
    assert other.receive(timeout_s=0.05) is None


def test_a_side_that_does_not_read_never_blocks_the_sender(pair):
    ours, other = pair
    state = RobotState(*(np.zeros(29),) * 3, None, None)
    sent = sum(ours.send(state, block=False) for _ in range(5000))  # ~1.5 kB each: far beyond the buffer
    assert 0 < sent < 5000 and ours.dropped == 5000 - sent
    for _ in range(sent):  # what was sent is intact
        assert isinstance(other.receive(0), RobotState)
    assert ours.send(Stop(), block=False)  # room again
    assert isinstance(other.receive(1.0), Stop)


def test_the_end_of_the_other_side_is_told(pair):
    ours, other = pair
    ours.send(Stop())
    ours.close()
    assert isinstance(other.receive(1.0), Stop)  # what was sent before the end still arrives
    with pytest.raises(LinkClosed):
        other.receive(1.0)
    with pytest.raises(LinkClosed):
        other.send(Stop(), block=False)
