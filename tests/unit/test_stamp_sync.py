import pytest

from g1_teleop.core.stamp_sync import StampSync


def test_complete_only_when_every_input_has_the_stamp():
    sync = StampSync(["a", "b"])
    assert not sync.complete(0)
    sync.put("a", 20, "x")
    assert not sync.complete(20)
    sync.put("b", 10, "y")
    assert not sync.complete(20)
    sync.put("b", 20, "z")
    assert sync.complete(20)
    assert sync.value("b") == "z" and sync.stamp("a") == 20


def test_complete_on_a_subset_of_the_inputs():
    sync = StampSync(["a", "b", "c"])
    sync.put("a", 20, "x")
    sync.put("b", 20, "y")
    assert sync.complete(20, ("a", "b")) and not sync.complete(20)


def test_a_new_lead_stamp_waits_until_answered():
    sync = StampSync(["joints", "arm"], lead="joints")
    assert sync.waiting_since_s is None and not sync.ready()
    sync.put("arm", 20, "a")
    sync.put("joints", 20, "q", now_s=5.0)
    assert sync.waiting_since_s == 5.0 and sync.ready()
    sync.answered()
    assert sync.waiting_since_s is None and not sync.ready()
    sync.put("joints", 20, "q again", now_s=6.0)  # the same period re-sent: still answered
    assert sync.waiting_since_s is None
    sync.put("joints", 40, "q", now_s=7.0)
    assert sync.waiting_since_s == 7.0 and not sync.ready()  # waits for its arm input
    sync.put("arm", 40, "a")
    assert sync.ready()


def test_the_lead_must_be_an_input():
    with pytest.raises(ValueError, match="lead input 'x' is not one of"):
        StampSync(["a"], lead="x")
    with pytest.raises(ValueError, match="needs a lead input"):
        StampSync(["a"]).ready()
