"""ROS 2 node executables: thin layers that turn messages into core calls and back."""
