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
