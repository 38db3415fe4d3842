"""container: several of the project's nodes in one process, spun by one executor thread (ROS 2's composition, which
rclpy lacks as components).

``python -m g1_teleop.nodes.container sim_bridge xr_input retarget policy --ros-args --params-file F …`` builds the
node of each named module of ``g1_teleop.nodes`` in that order and spins them all on one executor. Each stays the node
it is (its name, parameters, topics, services, diagnostics); messages between them pass within the process (Fast
DDS's intraprocess delivery), so a message wakes no other process, and work that runs in sequence anyway, the lockstep
graph's period (joint_states → wrist sample → arm target → command → physics), is not spread over processes that
wait for one another. What they share: one thread (a callback waits for the one in progress) and one fate (a node
that raises ends them all). The graph files group nodes with ``container`` (g1_teleop.launching.graph_description).

ROS arguments address one node by its name: parameters in a params-file section per node (``/**/policy:``),
remappings as ``policy:joint_states:=…``, a node renamed as ``policy:__node:=…``.
"""

from __future__ import annotations

import importlib
import inspect
import sys

from rclpy.node import Node

from g1_teleop.ros.node_main import run

USAGE = "usage: python -m g1_teleop.nodes.container EXECUTABLE [EXECUTABLE …] [--ros-args …]"


def node_class(executable: str) -> type[Node]:
    """The node class of ``g1_teleop.nodes.<executable>`` (the one Node subclass the module defines)."""
    module = importlib.import_module(f"g1_teleop.nodes.{executable}")
    classes = [c for _, c in inspect.getmembers(module, inspect.isclass)
               if issubclass(c, Node) and c.__module__ == module.__name__]
    if len(classes) != 1:
        raise ValueError(f"g1_teleop.nodes.{executable} defines {len(classes)} node classes, not one")
    return classes[0]


def main(args: list[str] | None = None) -> None:
    argv = list(args if args is not None else sys.argv)
    ros_args = argv.index("--ros-args") if "--ros-args" in argv else len(argv)
    executables = argv[1:ros_args]
    if not executables:
        sys.exit(USAGE)
    run([node_class(executable) for executable in executables], [argv[0], *argv[ros_args:]])


if __name__ == "__main__":
    main()
