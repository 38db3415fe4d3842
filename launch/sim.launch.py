"""Simulation graph: xr_input → retarget → policy → sim_bridge (MuJoCo). Nodes and arguments are in
config/graphs/sim.yaml, shared with `g1-teleop launch sim`.

    ros2 launch g1_teleop sim.launch.py lockstep:=false viewer:=true
"""

from g1_teleop.launching.launch_description import graph_launch_description


def generate_launch_description():
    return graph_launch_description("sim")
