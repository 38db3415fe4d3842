"""Turns a graph description (g1_teleop.launching.graph_description) into a ROS 2 LaunchDescription.

Used by launch/*.launch.py on ROS distributions; the pip runner reads the same graph files.
"""

from __future__ import annotations

import sys

from launch.actions import DeclareLaunchArgument, ExecuteProcess, OpaqueFunction, Shutdown
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from g1_teleop.launching.graph_description import load_graph
from launch import LaunchDescription


def graph_launch_description(graph_name: str) -> LaunchDescription:
    graph = load_graph(graph_name)

    def nodes(context, *_args, **_kwargs):
        values = {a.name: LaunchConfiguration(a.name).perform(context) for a in graph.arguments}
        actions = []
        for spec in graph.resolve(values):
            on_exit = Shutdown(reason=f"required node {spec.name} exited") if spec.required else None
            if spec.ros:
                actions.append(Node(package="g1_teleop", executable=spec.executable, name=spec.name,
                                    parameters=[spec.parameters], remappings=list(spec.remappings),
                                    output="screen", emulate_tty=True, on_exit=on_exit))
            else:
                actions.append(ExecuteProcess(cmd=[sys.executable, "-m", f"g1_teleop.{spec.executable}",
                                                   *spec.arguments], name=spec.name, output="screen",
                                              on_exit=on_exit))
        return actions

    return LaunchDescription([
        *[DeclareLaunchArgument(a.name, default_value=a.default, description=a.description)
          for a in graph.arguments],
        OpaqueFunction(function=nodes),
    ])
