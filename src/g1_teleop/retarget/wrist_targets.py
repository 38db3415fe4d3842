"""retarget's wrist targets: the operator's wrist samples through the clutch, and the operator's requests. ROS-free.

``WristTargets`` is what the retarget node asks for the IK's targets. It keeps the newest operator sample that the
clutch has not seen yet (``put_sample``), turns the Joy ENGAGE button's presses and the engage/pause requests into
clutch transitions, and ``step(now, robot)`` advances the clutch (``retarget.clutch``) and gives the two wrist
targets. The clutch is made at the first step, its first targets the robot's wrists then (``robot()``: the forward
kinematics of the measured arms, asked for only when needed). Times are seconds on the caller's clock (the ROS
clock: simulated in the simulation graph), the samples' times their stamps.

Mode ``auto`` (scenarios and bags: engaged at the first sample, absolute mapping, no operator needed) or
``operator`` (a live headset: nothing moves until the operator engages, relative mapping). See ``retarget.clutch``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from g1_teleop.retarget.clutch import (
    Clutch,
    ClutchConfig,
    ClutchState,
    ClutchStep,
    ClutchTransition,
    OperatorSample,
    Refused,
    WristPair,
)

CLUTCH_MODES = ("auto", "operator")


class WristTargets:
    """The IK's wrist targets (module docstring). ``home``: where the arms go after a long loss of tracking (the
    forward kinematics of the default arm pose); ``engage_button``: the Joy button that toggles the clutch on its
    press (operator mode)."""

    def __init__(self, mode: str, config: ClutchConfig, home: WristPair, engage_button: int) -> None:
        if mode not in CLUTCH_MODES:
            raise ValueError(f"clutch mode must be auto or operator, got {mode!r}")
        self.mode, self.config, self.home, self.engage_button = mode, config, home, engage_button
        self.clutch: Clutch | None = None
        self.pending: OperatorSample | None = None
        self.last_sample_s: float | None = None
        self._button_down = False
        self._engage_press_s: float | None = None  # an engage press waiting for its own sample's wrists (its stamp)

    @property
    def state(self) -> ClutchState:
        return ClutchState.DISENGAGED if self.clutch is None else self.clutch.state

    @property
    def started(self) -> bool:
        """The clutch has taken a first step (its targets exist)."""
        return self.clutch is not None

    def put_sample(self, wrists: WristPair, stamp_s: float) -> bool:
        """An operator sample (both wrists, pelvis frame) stamped ``stamp_s``; False when it is not newer than the
        last one (a lockstep re-publication), which is ignored."""
        if self.last_sample_s is not None and stamp_s <= self.last_sample_s:
            return False
        self.pending = OperatorSample(wrists, stamp_s)
        self.last_sample_s = stamp_s
        return True

    def step(self, now_s: float, robot: Callable[[], WristPair]) -> ClutchStep:
        """Advance the clutch to ``now_s`` with the sample that came since the last step, if any."""
        if self.clutch is None:
            self.clutch = Clutch(self.config, self.home, robot(), auto=self.mode == "auto")
        sample, self.pending = self.pending, None
        return self.clutch.step(now_s, sample)

    def engage(self, now_s: float, robot: Callable[[], WristPair]) -> ClutchTransition | Refused:
        """Start (or resume) following, anchored at the robot's wrists now."""
        if self.clutch is None:
            return Refused("no joint state yet: wait until the robot's state comes in, then engage")
        self._take_pending(now_s)
        return self.clutch.engage(now_s, robot())

    def pause(self, now_s: float) -> ClutchTransition | Refused:
        """Stop following; the arms hold where they are."""
        if self.clutch is None:
            return Refused("not engaged")
        return self.clutch.disengage(now_s)

    def joy(self, buttons: Sequence[int], stamp_s: float, now_s: float,
            robot: Callable[[], WristPair]) -> ClutchTransition | Refused | None:
        """A Joy message's buttons, stamped ``stamp_s``: the ENGAGE button's press (0 → 1) toggles the clutch
        (operator mode). A pause is at once; an engage waits for the wrists of the press's own sample (a headset
        sends its buttons and wrists together, and they may come in either order: the last pair may be from before
        a gap in tracking), see :meth:`engage_press`. None when nothing is decided (no press, an engage waiting, or
        auto mode, where the button is not used)."""
        down = len(buttons) > self.engage_button and bool(buttons[self.engage_button])
        pressed, self._button_down = down and not self._button_down, down
        if not pressed or self.mode == "auto":
            return None
        if self.clutch is not None and self.clutch.state is not ClutchState.DISENGAGED:
            self._engage_press_s = None
            return self.pause(now_s)
        self._engage_press_s = stamp_s
        return self.engage_press(now_s, robot)

    def engage_press(self, now_s: float, robot: Callable[[], WristPair]) -> ClutchTransition | Refused | None:
        """The engage press waiting, decided once the wrists of its sample (stamped at or after it) are in, or
        refused by the clutch when they have not come ``stale_after_s`` after it; None while it waits (or none
        waits). Call it before each step (the node: each solve)."""
        press_s = self._engage_press_s
        if press_s is None:
            return None
        tracked = self.last_sample_s is not None and self.last_sample_s >= press_s
        if not tracked and now_s - press_s <= self.config.stale_after_s:
            return None
        self._engage_press_s = None
        return self.engage(now_s, robot)

    def _take_pending(self, now_s: float) -> None:
        """Let the clutch see the newest sample before an engage (it needs fresh tracking); the targets do not move
        while disengaged, so this step changes nothing else."""
        if self.pending is not None and self.clutch is not None and self.clutch.state is ClutchState.DISENGAGED:
            self.clutch.step(now_s, self.pending)
            self.pending = None


class ClutchLog:
    """Log lines for the clutch's transitions without flooding: a transition after a quiet ``min_interval_s`` is
    logged at once; more within the interval wait for its end, and one line then gives the newest state, its reason
    and how many transitions it stands for (tracking that comes and goes, a page reconnecting)."""

    def __init__(self, min_interval_s: float = 1.0) -> None:
        self.min_interval_s = min_interval_s
        self._last_line_s: float | None = None
        self._newest: ClutchTransition | None = None
        self._count = 0

    def put(self, transitions: Sequence[ClutchTransition]) -> None:
        if transitions:
            self._newest, self._count = transitions[-1], self._count + len(transitions)

    def line(self, now_s: float) -> str | None:
        """The line to log at ``now_s`` (monotonic s), if any."""
        if self._newest is None or (self._last_line_s is not None and now_s - self._last_line_s < self.min_interval_s):
            return None
        t, count = self._newest, self._count
        self._newest, self._count, self._last_line_s = None, 0, now_s
        more = f" ({count} clutch transitions since the last line)" if count > 1 else ""
        return f"clutch {t.state.value}: {t.reason}{more}"
