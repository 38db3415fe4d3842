"""Real-robot graph: xr_input → retarget → policy → hw_bridge (a G1, or the virtual robot with
robot:=virtual). Nodes and arguments are in config/graphs/real.yaml, shared with `g1-teleop launch real`.

    ros2 launch g1_teleop real.launch.py network_interface:=enp3s0
"""

from g1_teleop.launching.launch_description import graph_launch_description


def generate_launch_description():
    return graph_launch_description("real")
