"""What xr_input offers the nodes downstream: its sources and the XR Joy layout. ROS-free.

Sources: a scenario through a simulated headset, a recorded bag's operator topics, a live headset over WebXR, the
Vision Pro app's stream, PICO's SDK (XRoboToolkit PC Service), a body stream file (whole-body retargeting). The live
ones have an operator behind them: retarget's clutch waits for the operator to engage.

A headset's controllers and hand gestures come out as one sensor_msgs/Joy layout (operator.xr_joy makes it).

The layout follows the Xbox pad as ROS's ``joy`` driver reports it, so the graph's defaults need no change:
the policy reads buttons 0 (request LOCOMOTION) and 1 (request SQUAT) and axes 1, 4 (height, pitch in SQUAT)
and 1, 0, 3 (vx, vy, wz in LOCOMOTION); hw_bridge e-stops on ``joy_estop_button:=11``.

Axes (8), in [-1, 1] or [0, 1]:

=====  ==========================================  ======================================
index  controllers                                 hand tracking
=====  ==========================================  ======================================
0      left thumbstick, left = +1                  0
1      left thumbstick, forward = +1               0
2      left trigger, 0 released … 1 pulled         left pinch closure (1 touching, 0 open)
3      right thumbstick, left = +1                 0
4      right thumbstick, forward = +1              0
5      right trigger                               right pinch closure
6      left squeeze (grip)                         0
7      right squeeze (grip)                        0
=====  ==========================================  ======================================

Buttons (12), 0 or 1:

=====  ==============================================  ==============================================
index  controllers                                     hand tracking
=====  ==============================================  ==============================================
0      A (right): request LOCOMOTION                   0
1      B (right): request SQUAT                        0
2      X (left)                                        0
3      Y (left)                                        0
4      left squeeze pressed                            0
5      right squeeze pressed                           0
6      left trigger pressed                            left pinch (hysteresis, ``hand_pinch``)
7      right trigger pressed                           right pinch
8      left thumbstick pressed                         0
9      right thumbstick pressed                        0
10     ENGAGE: both squeezes held ``engage_hold_s``    ENGAGE: both hands pinched ``engage_hold_s``
11     E-STOP: both thumbsticks pressed                0 (no gesture is deliberate enough)
=====  ==============================================  ==============================================

ENGAGE is 1 while its gesture is held, once it has been held for ``engage_hold_s`` (a short accidental double
pinch does not count); the clutch toggles on its press. E-STOP acts at once. With hand tracking there is no
e-stop gesture: an e-stop damps the motors, and a standing robot falls, so it must not fire from an
accidental hand pose; keep the robot's remote (``select``) or ``g1-teleop call hw_bridge/estop`` at hand.
"""

from __future__ import annotations

from enum import IntEnum

SOURCES = ("scenario", "bag", "webxr", "avp", "pico", "body")
"""xr_input's sources (module docstring)."""
LIVE_SOURCES = ("webxr", "avp", "pico")
"""Sources with an operator behind them."""

JOY_FRAMES = {"hands": "xr_hands", "controllers": "xr_controllers"}
"""The Joy messages' frame_id for each input: the layout is the same, the gestures differ."""


class JoyAxis(IntEnum):
    """Axis indices of the XR Joy layout (module docstring)."""

    LEFT_STICK_X = 0
    LEFT_STICK_Y = 1
    LEFT_TRIGGER = 2
    RIGHT_STICK_X = 3
    RIGHT_STICK_Y = 4
    RIGHT_TRIGGER = 5
    LEFT_SQUEEZE = 6
    RIGHT_SQUEEZE = 7


class JoyButton(IntEnum):
    """Button indices of the XR Joy layout (module docstring)."""

    A = 0
    B = 1
    X = 2
    Y = 3
    LEFT_SQUEEZE = 4
    RIGHT_SQUEEZE = 5
    LEFT_TRIGGER = 6
    RIGHT_TRIGGER = 7
    LEFT_STICK = 8
    RIGHT_STICK = 9
    ENGAGE = 10
    ESTOP = 11
