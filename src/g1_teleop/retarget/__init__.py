"""Retargeting, the second stage: the operator's hands to the robot's arm joints (dual-arm IK with self-collision
constraints and gravity feed-forward, gamepad differential IK); whole body and hands to come."""
