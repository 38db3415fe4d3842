"""When the policy's real-time tick computes and writes its command, ROS-free.

The tick timer, re-armed for each tick, wakes ``wake_lead_s`` before the tick's time on the control clock: the longer
of ``command_lead_s`` and ``WAKE_EARLY_S``. Woken before the tick's computing time (its time less
``command_lead_s``), the node takes the inputs received so far and waits for it; it then takes the newest inputs,
computes, and writes the command no earlier than the tick's time. Woken after its computing time, it computes at
once. So with ``command_lead_s`` = 0 a command answers the freshest inputs and is written as soon as it is computed;
with a lead, how long the computing takes (and a late wake within the lead) moves no write.

``WAKE_EARLY_S``: re-armed for each tick, rclpy's EventsExecutor's timer fires 0.3–0.4 ms late at the median and
1.3–1.8 ms at p99 on this project's 2-core machine. In the composed simulation graph (one thread) a tick's time falls
just after a physics step's, which a wake 1 ms early met in 21–151 of 500 ticks (traced) and waited for; 2 ms
early it precedes it, and the step follows the tick. Times: monotonic seconds.
"""

from __future__ import annotations

from dataclasses import dataclass

from g1_teleop.control.control_clock import ControlClock, TickTiming

WAKE_EARLY_S = 0.002


@dataclass(frozen=True)
class TickPlan:
    """One wake of the tick timer at ``woke_s``. ``ahead_s``: from the wake to the next tick's time (≤ 0: woken
    after it; None: the clock has no tick yet); ``early``: woken within ``wake_lead_s`` before it; ``tick_s``: the
    tick's time if early, else the wake's; ``compute_s``: when its computing is due (the tick's time less
    command_lead_s; past when woken late)."""

    woke_s: float
    ahead_s: float | None
    early: bool
    tick_s: float
    compute_s: float


class TickSchedule:
    def __init__(self, clock: ControlClock, command_lead_s: float = 0.0) -> None:
        """``command_lead_s``: in [0, half of the clock's period) (PolicyNodeConfig checks it)."""
        self.clock, self.command_lead_s = clock, command_lead_s
        self.wake_lead_s = max(command_lead_s, WAKE_EARLY_S)

    def plan(self, woke_s: float) -> TickPlan:
        """What a wake of the tick timer at ``woke_s`` leads to (the clock's samples put before)."""
        ahead = self.clock.until_next_s(woke_s)
        early = ahead is not None and 0.0 < ahead <= self.wake_lead_s
        compute_s = woke_s if ahead is None else woke_s + ahead - self.command_lead_s
        return TickPlan(woke_s, ahead, early, woke_s + ahead if early and ahead is not None else woke_s, compute_s)

    def next_wake_in_s(self, plan: TickPlan, timing: TickTiming, now_s: float) -> float:
        """From ``now_s`` to the next wake (s, at least 1 µs): ``wake_lead_s`` before the tick after the one
        ``timing`` (the clock polled at ``plan.tick_s``) answered."""
        return max(1e-6, plan.tick_s + timing.wait_s - self.wake_lead_s - now_s)
