"""g1_teleop: ROS 2 teleoperation graph for the Unitree G1 (29 DoF), in MuJoCo and on the robot."""

__version__ = "0.1.0"
