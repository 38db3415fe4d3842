"""Rate-limited log lines (ros/diagnostics.RateLimitedLog) and the spin loop's guard against rclpy's time source."""

from __future__ import annotations

import pytest
from builtin_interfaces.msg import Time
from rosgraph_msgs.msg import Clock

from g1_teleop.ros.diagnostics import RateLimitedLog
from g1_teleop.ros.node_main import from_time_source


class Lines:
    def __init__(self) -> None:
        self.lines: list[tuple[str, str]] = []

    def info(self, message: str) -> bool:
        self.lines.append(("info", message))
        return True

    def warning(self, message: str) -> bool:
        self.lines.append(("warning", message))
        return True

    def error(self, message: str) -> bool:
        self.lines.append(("error", message))
        return True


def test_at_most_n_lines_per_kind_per_period_and_the_next_says_how_many_were_suppressed():
    now = [0.0]
    out = Lines()
    log = RateLimitedLog(out, lines=3, period_s=1.0, clock=lambda: now[0])
    for k in range(550):  # 550 requests in one second, two kinds
        now[0] = k / 550
        log.warning("refused", f"refused {k}")
        log.info("accepted", f"accepted {k}")
    assert len(out.lines) == 6 and log.suppressed == {"refused": 547, "accepted": 547}
    now[0] = 1.0
    log.warning("refused", "refused again")
    assert out.lines[-1] == ("warning", "refused again (547 suppressed)") and "refused" not in log.suppressed
    with pytest.raises(ValueError, match="lines >= 1"):
        RateLimitedLog(out, lines=0)


def test_an_exception_from_rclpys_time_source_is_recognised():
    from rclpy.time_source import TimeSource

    with pytest.raises(ValueError) as raised:
        TimeSource().clock_callback(Clock(clock=Time(sec=-1)))
    assert from_time_source(raised.value)
    with pytest.raises(ZeroDivisionError) as other:
        _ = 1 / 0
    assert not from_time_source(other.value)
