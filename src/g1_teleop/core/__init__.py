"""The ROS-free core every layer builds on: the robot description and its joint groups, the MuJoCo and Pinocchio
models built from it, limits, rotations and poses, declared settings, stamps and watchdogs."""
