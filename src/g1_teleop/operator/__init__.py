"""Operator input, the first stage of the data flow: XR headset frames, scripted scenarios and recorded bags as
sources of head, wrist and joystick samples (live devices join here)."""
