"""The headset link's status: each state, its one-line text (address and what to check), the followed headset."""

from __future__ import annotations

import pytest

from g1_teleop.operator.webxr_status import LinkMonitor, LinkState, StatusLog

URL, PAGE = "https://192.168.1.20:8012", "https://192.168.1.20:8012/?ws=wss://192.168.1.20:8012"


def monitor() -> LinkMonitor:
    return LinkMonitor(URL, PAGE, "hands", stale_after_s=0.5)


def test_no_client() -> None:
    status = monitor().status(0.0)
    assert status.state is LinkState.NO_CLIENT and status.clients == 0 and status.sample_age_s is None
    assert status.text.startswith(f"no headset connected at {URL}: open {PAGE} in the headset's browser")
    assert "g1-teleop xr-cert" in status.text


def test_connected_then_stale_then_dropped() -> None:
    m = monitor()
    m.opened("ws1", "192.168.1.31")
    status = m.status(1.0)
    assert status.state is LinkState.STALE and "sends no hands data: press Virtual Reality" in status.text
    for i in range(31):
        assert m.sample("ws1", 2.0 + i / 30, tracked=True)
    status = m.status(3.1)
    assert status.state is LinkState.CONNECTED and status.operator == "192.168.1.31"
    assert status.rate_hz == pytest.approx(30.0)
    assert status.text == "headset 192.168.1.31 connected: hands at 30 Hz"
    status = m.status(3.0 + 0.6)
    assert status.state is LinkState.STALE and status.sample_age_s == pytest.approx(0.6) and status.rate_hz == 0.0
    assert status.text == "headset 192.168.1.31: no hands data for 0.6 s: keep both hands in the headset's view"
    m.closed("ws1", 4.0)
    status = m.status(5.5)
    assert status.state is LinkState.DROPPED and status.operator is None and status.clients == 0
    assert status.text.startswith("headset 192.168.1.31 disconnected 1.5 s ago (WebSocket closed): check the Wi-Fi")
    assert status.text.endswith(f"reload {PAGE} to reconnect")


def test_only_the_first_sending_headset_is_followed() -> None:
    m = monitor()
    m.opened("laptop", "192.168.1.40")
    m.opened("headset", "192.168.1.31")
    assert m.sample("headset", 1.0, tracked=True)
    assert not m.sample("laptop", 1.01, tracked=True)
    assert m.sample("headset", 1.02, tracked=True)
    status = m.status(1.03)
    assert status.operator == "192.168.1.31" and status.sample_age_s == pytest.approx(0.01)
    assert status.text.endswith("1 other client(s) connected, not followed")
    m.closed("headset", 2.0)  # the followed headset leaves: the next sender is followed
    assert m.sample("laptop", 2.1, tracked=True) and m.status(2.1).operator == "192.168.1.40"


def test_samples_without_tracking_are_stale() -> None:
    m = monitor()
    m.opened("ws1", "192.168.1.31")
    for i in range(10):
        m.sample("ws1", 1.0 + i / 60, tracked=i < 3)
    status = m.status(1.15)
    assert status.state is LinkState.CONNECTED  # the last tracked sample is 0.12 s old
    m.sample("ws1", 1.7, tracked=False)
    status = m.status(1.7)
    assert status.state is LinkState.STALE and status.tracked_age_s == pytest.approx(0.667, abs=1e-3)
    assert status.text.startswith("headset 192.168.1.31 sends hands at ")
    assert status.text.endswith("but not both tracked for 0.7 s (out of view, or the head pose missing): keep both "
                                "hands in the headset's view")


def test_failed_and_malformed() -> None:
    m = LinkMonitor(URL, PAGE, "controllers", 0.5)
    m.opened("ws", "10.0.0.2")
    m.malformed("HAND_MOVE value.left must be 400 numbers, got 16 values")
    status = m.status(0.0)
    assert status.malformed == 1 and status.last_malformed.startswith("HAND_MOVE value.left")
    assert "wake both controllers" in status.text
    m.failed("cannot listen on 0.0.0.0:8012 (Address already in use): stop the program using that port")
    assert m.status(0.0).state is LinkState.FAILED and m.status(0.0).text.startswith("cannot listen")


def test_status_lines_on_each_change_without_flooding() -> None:
    """One line per change of state; a page that reconnects over and over gives one line per interval with the
    newest status and how many changes it stands for."""
    m, log = monitor(), StatusLog(min_interval_s=2.0)
    first = log.update(0.0, m.status(0.0))
    assert first == f"WebXR no client: no headset connected at {URL}: open {PAGE} in the headset's browser, trust " \
                    "the certificate (g1-teleop xr-cert), then press Virtual Reality or Pass-through"
    assert log.update(0.5, m.status(0.5)) is None  # nothing changed
    m.opened("ws1", "192.168.1.31")
    assert log.update(3.0, m.status(3.0)).startswith("WebXR stale: headset 192.168.1.31 connected but sends no")
    for k in range(10):  # the page reloads every 0.1 s
        m.closed("ws1", 3.05 + 0.1 * k)
        assert log.update(3.06 + 0.1 * k, m.status(3.06 + 0.1 * k)) is None
        m.opened("ws1", "192.168.1.31")
        assert log.update(3.1 + 0.1 * k, m.status(3.1 + 0.1 * k)) is None
    m.sample("ws1", 4.9, tracked=True)
    line = log.update(5.0, m.status(5.0))
    assert line.startswith("WebXR connected: headset 192.168.1.31 connected: hands") and \
        line.endswith("(21 status changes in the last 2 s)")
    assert log.update(9.0, m.status(4.95)) is None
