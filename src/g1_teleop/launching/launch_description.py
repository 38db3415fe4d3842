"""Turns a graph description (g1_teleop.launching.graph_description) into a ROS 2 LaunchDescription.

Used by launch/*.launch.py on ROS distributions; the pip runner reads the same graph files. Where the
distribution has them, its own tools take over from the pip stand-ins: robot_state_publisher publishes
robot_description, /tf_static and the links' /tf of a URDF model without Dex3 hands (robot_state then publishes only
world → pelvis, xr_world and the wrist markers: ``links`` false), and foxglove_bridge serves Foxglove
(port 8765) instead of tools/foxglove_bridge.py.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import tempfile
from pathlib import Path

import yaml
from launch.actions import DeclareLaunchArgument, ExecuteProcess, OpaqueFunction, SetEnvironmentVariable, Shutdown
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from g1_teleop.core.realtime_priority import SCHED_FIFO_ENV
from g1_teleop.core.robot_description import load_robot
from g1_teleop.launching.dds_discovery import discovery_environment
from g1_teleop.launching.graph_description import NodeSpec, load_graph, processes
from g1_teleop.launching.process_runner import container_command, params_document, process_prefix
from launch import LaunchDescription

FOXGLOVE_PORT = 8765


def _installed(package: str) -> bool:
    from ament_index_python.packages import PackageNotFoundError, get_package_share_directory

    try:
        get_package_share_directory(package)
    except (PackageNotFoundError, OSError):  # OSError: no AMENT_PREFIX_PATH, no ROS environment
        return False
    return True


def _distribution_nodes(spec: NodeSpec) -> tuple[NodeSpec | None, list[Node]]:
    """The graph's node (or None: replaced) and the distribution's nodes that take over its work."""
    if spec.executable == "robot_state" and _installed("robot_state_publisher"):
        robot = load_robot(model=spec.parameters.get("model") or None)
        if robot.model_is_mjcf or spec.parameters.get("dex3"):
            # robot_state_publisher reads URDF only, and the fingers' positions are not in joint_states: robot_state
            # publishes every frame
            return spec, []
        publisher = Node(package="robot_state_publisher", executable="robot_state_publisher", output="screen",
                         prefix=" ".join(process_prefix(spec)) or None,
                         parameters=[{"robot_description": robot.model_path.read_text(),
                                      "use_sim_time": bool(spec.parameters.get("use_sim_time", False))}])
        return dataclasses.replace(spec, parameters={**spec.parameters, "links": False}), [publisher]
    if spec.executable == "tools.foxglove_bridge" and _installed("foxglove_bridge"):
        return None, [Node(package="foxglove_bridge", executable="foxglove_bridge", output="screen",
                           prefix=" ".join(process_prefix(spec)) or None,
                           parameters=[{"port": FOXGLOVE_PORT, "use_sim_time": "--use-sim-time" in spec.arguments}])]
    return spec, []


def graph_launch_description(graph_name: str) -> LaunchDescription:
    graph = load_graph(graph_name)

    def nodes(context, *_args, **_kwargs):
        values = {a.name: LaunchConfiguration(a.name).perform(context) for a in graph.arguments}
        actions, specs = [], []
        for resolved in graph.resolve(values):
            spec, taking_over = _distribution_nodes(resolved)
            actions += taking_over
            if spec is not None:
                specs.append(spec)
        for members in processes(specs):
            spec = members[0]
            required = [m.name for m in members if m.required]
            on_exit = Shutdown(reason=f"required node {required[0]} exited") if required else None
            prefix = " ".join(process_prefix(spec)) or None
            fifo_env = {SCHED_FIFO_ENV: str(spec.priority)} if spec.priority else None
            # Ctrl-C → SIGINT, then SIGTERM after this
            stopping = {"sigterm_timeout": str(max(m.stop_timeout_s for m in members))}
            if len(members) > 1:  # a container: its command line and params file as the pip runner makes them
                params_file = Path(tempfile.mkdtemp(prefix="g1_teleop_launch_")) / f"{spec.container}.yaml"
                params_file.write_text(yaml.safe_dump(params_document(members)))
                actions.append(ExecuteProcess(cmd=container_command(members, params_file), name=spec.container,
                                              output="screen", emulate_tty=True, on_exit=on_exit, prefix=prefix,
                                              additional_env=fifo_env, **stopping))
            elif spec.ros:
                actions.append(Node(package="g1_teleop", executable=spec.executable, name=spec.name,
                                    parameters=[spec.parameters], remappings=list(spec.remappings),
                                    output="screen", emulate_tty=True, on_exit=on_exit, prefix=prefix,
                                    additional_env=fifo_env,
                                    **stopping))
            else:
                actions.append(ExecuteProcess(cmd=[sys.executable, "-m", f"g1_teleop.{spec.executable}",
                                                   *spec.arguments], name=spec.name, output="screen",
                                              on_exit=on_exit, prefix=prefix, **stopping))
        return actions

    return LaunchDescription([
        *[DeclareLaunchArgument(a.name, default_value=a.default, description=a.description,
                                **({"choices": list(a.choices)} if a.choices else {}))
          for a in graph.arguments],
        *[SetEnvironmentVariable(name, value) for name, value in discovery_environment(os.environ).items()],
        OpaqueFunction(function=nodes),
    ])
