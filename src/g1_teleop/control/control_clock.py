"""The policy's own clock for its real-time ticks, ROS-free.

The 50 Hz tick must come from a clock, not from the arrival of one particular message: the simulator's
/clock advances in 5 ms physics steps (and a ROS timer on sim time fires only when one arrives), so ticks
driven by it inherit every late delivery. This clock follows a source clock — sim time from /clock, or the
ROS clock itself on a robot — from its samples against the monotonic clock, and extrapolates between them:

    source time at monotonic time m  =  (m − offset) · rate

``rate`` (source seconds per monotonic second: the simulator's real-time factor) is the slope between the least
delayed samples at the two ends of the last ``rate_window_s`` (the median of the last such slopes);
``offset`` the smallest (least delayed) mono − source/rate of the samples in the last ``offset_window_s``, so
a late delivery does not move the ticks. It never runs more than
``max_ahead_s`` ahead of the newest sample (a paused simulation stops the ticks) and never goes back.

Samples that cannot be the source's are refused: negative (``negative``), or ahead of the extrapolation by
more than ``ahead_tolerance_s``, or behind it by more than ``behind_tolerance_s`` and older than the newest sample
taken: back in time (``jump``: anyone can publish a /clock). A sample far behind the extrapolation but newer than
the newest is the source itself, slowed or stalled (a starved simulator slips: it runs on from where it stood):
taken, so that the ticks follow it instead of stopping until a relock. The clock locks on a timeline only once
it is confirmed: ``confirm_samples`` samples over at least ``confirm_span_s`` on one line of slope (rate) within
±20 % of their median, in [0.01, 100] (a repeated or random value is no clock). It starts that way, and starts
anew (a simulator restarted) when no sample has been taken for ``relock_after_s`` and the refused ones confirm
another timeline. Late samples (a stray /clock a little in the past) are taken but never the least delayed: they
move neither the ticks nor the rate.

:meth:`ControlClock.poll` says when the next tick is due: ticks lie on a grid of ``period_s`` in source time,
each stamped with its grid time; a tick more than one period late is skipped (counted), not caught up.
Times: monotonic seconds; source times: integer nanoseconds.
"""

from __future__ import annotations

import statistics
from collections import deque
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class ControlClockConfig:
    """See the module doc; all in seconds."""

    period_s: float = 0.02
    offset_window_s: float = 0.25
    rate_window_s: float = 1.0
    max_ahead_s: float = 0.1  # delivery gaps under load; a paused simulation: the stale-state rule stops commands
    ahead_tolerance_s: float = 0.1
    behind_tolerance_s: float = 0.5
    relock_after_s: float = 0.5
    confirm_samples: int = 5
    confirm_span_s: float = 0.1
    early_s: float = 0.0005  # a tick this close to its time is due (timer wake-up granularity)

    def __post_init__(self) -> None:
        for name, value in vars(self).items():
            if not (np.isfinite(value) and value > 0):
                raise ValueError(f"control clock: {name} must be a finite value > 0, got {value}")


@dataclass(frozen=True)
class TickTiming:
    """``due``: tick now, stamped ``stamp_ns`` (its grid time); ``wait_s``: monotonic seconds until the next
    poll."""

    due: bool
    stamp_ns: int
    wait_s: float


class ControlClock:
    def __init__(self, config: ControlClockConfig | None = None) -> None:
        self.config = config or ControlClockConfig()
        self._recent: deque[tuple[float, int]] = deque()  # accepted (mono s, source ns) of the offset window
        self._rate_base: deque[tuple[float, int]] = deque()  # accepted samples of the last rate window
        self._slopes: deque[float] = deque(maxlen=25)
        self._candidates: deque[tuple[float, int]] = deque()  # refused (or unlocked) samples of the last second
        self._rate = 1.0
        self._last_now_ns = -1
        self._last_accepted_s: float | None = None
        self._next_ns: int | None = None  # the next tick's grid time
        self.refused: dict[str, int] = {}
        self.skipped_ticks = 0
        self.relocks = 0

    @property
    def locked(self) -> bool:
        return bool(self._recent)

    @property
    def rate(self) -> float:
        return self._rate

    def _estimate_ns(self, mono_s: float) -> float:
        """The source time at ``mono_s`` from the samples (no cap, no monotonicity)."""
        offset = min(m - s * 1e-9 / self._rate for m, s in self._recent)
        return (mono_s - offset) * self._rate * 1e9

    def _confirmed(self) -> tuple[float, list[tuple[float, int]]] | None:
        """A timeline the candidate samples confirm: its rate and samples (the newest last), or None."""
        cfg = self.config
        newest_s, newest_ns = self._candidates[-1]
        older = [(m, n) for m, n in self._candidates if m < newest_s - 0.001 and n < newest_ns]
        if len(older) < cfg.confirm_samples - 1:
            return None
        slopes = np.array([(newest_ns - n) * 1e-9 / (newest_s - m) for m, n in older])
        rate = float(np.median(slopes))
        members = [sample for sample, slope in zip(older, slopes, strict=True) if abs(slope / rate - 1) < 0.2]
        if not (0.01 <= rate <= 100 and len(members) >= cfg.confirm_samples - 1
                and newest_s - members[0][0] >= cfg.confirm_span_s):
            return None
        return rate, [*members, (newest_s, newest_ns)]

    def _lock(self, rate: float, samples: list[tuple[float, int]]) -> None:
        self._recent.clear()
        self._rate_base.clear()
        self._slopes.clear()
        self._candidates.clear()
        self._last_now_ns, self._next_ns, self._rate = -1, None, rate
        self._recent.extend(samples)
        self._rate_base.extend(samples)
        self._last_accepted_s = samples[-1][0]

    def put(self, source_ns: int, mono_s: float) -> str | None:
        """A sample of the source clock received at ``mono_s``: None when taken, else the kind of refusal
        (``negative``, ``jump``; ``unconfirmed`` while no timeline is confirmed yet)."""
        cfg = self.config
        kind, error_s = None, 0.0
        if source_ns < 0:
            kind = "negative"
        elif not self._recent:
            kind = "unconfirmed"
        else:
            error_s = (source_ns - self._estimate_ns(mono_s)) * 1e-9
            back = error_s < -cfg.behind_tolerance_s and source_ns < self._newest_ns()
            if error_s > cfg.ahead_tolerance_s or back:
                kind = "jump"
        if kind is not None:
            self.refused[kind] = self.refused.get(kind, 0) + 1
            if kind == "negative":
                return kind
            self._candidates.append((mono_s, source_ns))
            while mono_s - self._candidates[0][0] > 1.0:
                self._candidates.popleft()
            silent = self._last_accepted_s is None or mono_s - self._last_accepted_s > cfg.relock_after_s
            if silent and (confirmed := self._confirmed()) is not None:
                self.relocks += self._last_accepted_s is not None
                self._lock(*confirmed)
                return None
            return kind
        self._last_accepted_s = mono_s
        self._recent.append((mono_s, source_ns))
        while mono_s - self._recent[0][0] > cfg.offset_window_s:
            self._recent.popleft()
        base = self._rate_base
        base.append((mono_s, source_ns))
        while mono_s - base[0][0] > cfg.rate_window_s:
            base.popleft()
        if len(base) % 10 == 0 and mono_s - base[0][0] > 0.9 * cfg.rate_window_s:
            self._update_rate()
        return None

    def _update_rate(self) -> None:
        """The slope between the least delayed samples of the first and the last quarter of the rate window.
        (Plain Python: on the 50 samples a second of a robot's ROS clock, numpy's per-call cost was most of a tick's
        clock work, 80 µs every tenth tick here, hot.)"""
        base, rate = self._rate_base, self._rate
        quarter = 0.25 * (base[-1][0] - base[0][0])
        first_end, last_start = base[0][0] + quarter, base[-1][0] - quarter
        a = min((sample for sample in base if sample[0] <= first_end), key=lambda s: s[0] - s[1] * 1e-9 / rate)
        b = min((sample for sample in base if sample[0] >= last_start), key=lambda s: s[0] - s[1] * 1e-9 / rate)
        if b[0] - a[0] > 0 and b[1] > a[1]:
            self._slopes.append((b[1] - a[1]) * 1e-9 / (b[0] - a[0]))
            self._rate = min(max(statistics.median(self._slopes), 0.01), 100.0)

    def _newest_ns(self) -> int:
        return max(n for _, n in self._recent)

    def now_ns(self, mono_s: float) -> int | None:
        """The source time now (never back, at most ``max_ahead_s`` past the newest sample); None before the
        first sample."""
        if not self._recent:
            return None
        estimate = self._estimate_ns(mono_s)
        capped = min(estimate, self._newest_ns() + self.config.max_ahead_s * 1e9)
        self._last_now_ns = max(self._last_now_ns, int(capped))
        return self._last_now_ns

    def until_next_s(self, mono_s: float) -> float | None:
        """Monotonic seconds from ``mono_s`` to the next tick's time (negative: past it); None before the first
        sample or poll."""
        now = self.now_ns(mono_s)
        if now is None or self._next_ns is None:
            return None
        return (self._next_ns - now) * 1e-9 / self._rate

    def poll(self, mono_s: float) -> TickTiming:
        """Whether a tick is due at ``mono_s`` and how long to wait before polling again."""
        cfg = self.config
        period_ns = round(cfg.period_s * 1e9)
        now = self.now_ns(mono_s)
        if now is None:
            return TickTiming(False, -1, cfg.period_s)
        if self._next_ns is None:
            self._next_ns = -(-now // period_ns) * period_ns  # the first grid time at or after now
        due = now >= self._next_ns - cfg.early_s * 1e9
        stamp = self._next_ns
        if due:
            self._next_ns += period_ns
            if self._next_ns <= now:  # more than a period late: skip to the grid time after now
                late = (now - self._next_ns) // period_ns + 1
                self.skipped_ticks += int(late)
                self._next_ns += int(late) * period_ns
        wait_s = (self._next_ns - now) * 1e-9 / self._rate
        return TickTiming(due, stamp, min(max(wait_s, 0.0005), 2 * cfg.period_s))
