"""Turns a graph description (g1_teleop.graph) into a ROS 2 LaunchDescription.

Used by launch/*.launch.py on ROS distributions; the pip runner reads the same graph files.
"""

from __future__ import annotations

from launch.actions import DeclareLaunchArgument, OpaqueFunction, Shutdown
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from g1_teleop.graph import load_graph
from launch import LaunchDescription


def graph_launch_description(graph_name: str) -> LaunchDescription:
    graph = load_graph(graph_name)

    def nodes(context, *_args, **_kwargs):
        values = {a.name: LaunchConfiguration(a.name).perform(context) for a in graph.arguments}
        return [
            Node(
                package="g1_teleop",
                executable=spec.executable,
                name=spec.name,
                parameters=[spec.parameters],
                remappings=list(spec.remappings),
                output="screen",
                emulate_tty=True,
                on_exit=Shutdown(reason=f"required node {spec.name} exited") if spec.required else None,
            )
            for spec in graph.resolve(values)
        ]

    return LaunchDescription([
        *[DeclareLaunchArgument(a.name, default_value=a.default, description=a.description)
          for a in graph.arguments],
        OpaqueFunction(function=nodes),
    ])
