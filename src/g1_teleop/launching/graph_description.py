"""One description of each node graph, read by the launch files and by the pip runner.

A graph file (config/graphs/NAME.yaml) declares typed arguments and the nodes with their parameters;
``$(arg NAME)`` inside a parameter value (or a plain process's argument) is replaced by the argument's
value (an argument with ``choices`` takes one of them only). A node with ``when: {ARG: VALUE}`` runs only when
that argument has that value (``[V1, V2]``: one of them); ``ros: false`` marks a plain process (``python -m
g1_teleop.EXECUTABLE ARGUMENTS…``, e.g. the virtual robot); ``nice: N`` (0–19) runs a node at that lower CPU
priority: the observers (frames, cameras, Foxglove) yield the cores to the control path on a small machine;
``priority: P`` (a number or ``$(arg …)``; 0 none) asks SCHED_FIFO priority P for a ROS node of the control path
(the runners pass it in ``G1_TELEOP_SCHED_FIFO``; the node applies it once constructed, to the threads
core.realtime_priority names, or logs why it could not); ``stop_timeout_s: S`` gives a node S seconds from the stop
signal to finish its work before it is killed (default 10; a recorder that exports a dataset needs longer);
``cpus: LIST`` (a CPU list such as 1 or 2-3, or ``$(arg …)``; empty none) keeps a node's process on those cores and
every process of the graph that names no cores off them (the runners start each process under ``taskset -c``), so that
nothing else evicts the command chain's code and data from those cores' caches between its ticks
(g1_teleop.core.cpu_affinity); ``container: NAME`` puts a ROS node in one process with the other nodes of that
container, spun by one thread (g1_teleop.nodes.container), when the graph's ``compose`` argument is true (a graph
without one: always): nodes whose work runs in sequence anyway then pass their messages within the process; the nodes of
one container ask the same ``nice``, ``priority`` and ``cpus`` (the process's). ROS-free.
"""

from __future__ import annotations

import dataclasses
import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from g1_teleop.core.cpu_affinity import cpu_list, isolated_cpus, parse_cpu_list, usable_cpus
from g1_teleop.core.paths import config_path
from g1_teleop.core.strict_yaml import load_yaml

_ARG = re.compile(r"\$\(arg ([A-Za-z_][A-Za-z0-9_]*)\)")
_TYPES = {"str": str, "bool": None, "float": float, "int": int}
COMPOSE_ARGUMENT = "compose"  # false: every node of a container in a process of its own


class GraphError(ValueError):
    """A graph file or an argument value that cannot be used; the message names the place."""


def _to_bool(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered in ("true", "1", "yes", "on"):
        return True
    if lowered in ("false", "0", "no", "off"):
        return False
    raise ValueError(f"{text!r} is not a boolean (use true or false)")


@dataclass(frozen=True)
class Argument:
    name: str
    default: str
    description: str = ""
    type: str = "str"
    choices: tuple[str, ...] = ()  # the values allowed (empty: any of the type)

    def convert(self, text: str) -> Any:
        try:
            if self.choices and text not in self.choices:
                raise ValueError(f"not one of {list(self.choices)}")
            if self.type == "bool":
                return _to_bool(text)
            return _TYPES[self.type](text)
        except ValueError as exc:
            raise GraphError(f"argument {self.name}:={text!r}: {exc}") from None


@dataclass(frozen=True)
class NodeSpec:
    executable: str
    name: str
    required: bool
    parameters: dict[str, Any]
    remappings: tuple[tuple[str, str], ...] = ()
    ros: bool = True  # False: a plain process, started with ``arguments`` instead of ROS parameters
    arguments: tuple[str, ...] = ()
    when: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (argument, its allowed values) pairs that must all hold
    nice: int = 0  # the process's niceness (0–19): higher yields the CPU to the others
    priority: Any = 0  # SCHED_FIFO priority (1–99, or "$(arg …)" until resolved); 0: normal scheduling
    # from the stop signal (SIGINT or SIGTERM) to SIGKILL (s); 10: a node still building its models when stopped
    # finishes that first (ros2 launch's default, 5 s, was seen to kill the policy on a loaded 2-core machine)
    stop_timeout_s: float = 10.0
    container: str = ""  # the process shared with the container's other nodes; empty: a process of its own
    # the cores the process runs on (a CPU list, or "$(arg …)" until resolved): asked, the cores kept for the node;
    # resolved, for every process when any node keeps cores (the others get the cores left), else empty: any core
    cpus: str = ""


@dataclass(frozen=True)
class Graph:
    name: str
    description: str
    arguments: tuple[Argument, ...]
    nodes: tuple[NodeSpec, ...]
    source: Path = field(compare=False, default=Path())
    unavailable: str = ""  # why the graph cannot run yet (empty: it can)

    def argument(self, name: str) -> Argument:
        for arg in self.arguments:
            if arg.name == name:
                return arg
        raise GraphError(f"{self.source}: no argument {name!r}; arguments: {[a.name for a in self.arguments]}")

    def resolve(self, values: dict[str, str] | None = None,
                usable: frozenset[int] | None = None) -> list[NodeSpec]:
        """Nodes with every ``$(arg …)`` replaced and their cores (:meth:`_pinned`; ``usable``: the cores the graph's
        processes run on by default, this process's unless given); ``values`` override the argument defaults."""
        if self.unavailable:
            raise GraphError(f"graph {self.name} cannot run yet: {self.unavailable}")
        values = dict(values or {})
        unknown = set(values) - {a.name for a in self.arguments}
        if unknown:
            raise GraphError(
                f"unknown argument(s) {sorted(unknown)} for graph {self.name}; "
                f"known: {[a.name for a in self.arguments]}"
            )
        text = {a.name: values.get(a.name, a.default) for a in self.arguments}
        typed = {a.name: a.convert(text[a.name]) for a in self.arguments}
        composed = typed.get(COMPOSE_ARGUMENT, True)
        chosen = {name: str(value).lower() if isinstance(value, bool) else text[name] for name, value in typed.items()}
        for node in self.nodes:
            for arg, _ in node.when:
                self.argument(arg)
        return self._pinned([
            dataclasses.replace(
                node,
                parameters={key: self._substitute(value, text, typed) for key, value in node.parameters.items()},
                arguments=tuple(str(self._substitute(value, text, text)) for value in node.arguments),
                when=(),
                priority=self._priority(node, text, typed),
                container=node.container if composed else "",
                cpus=str(self._substitute(node.cpus, text, text)),
            )
            for node in self.nodes
            if all(chosen[arg] in values for arg, values in node.when)  # (a bool argument as true or false)
        ], usable_cpus() if usable is None else usable)

    def _pinned(self, nodes: list[NodeSpec], usable: frozenset[int]) -> list[NodeSpec]:
        """Each node with the cores its process runs on: its own ``cpus`` if it keeps some (of ``usable`` or the
        cores isolated from the scheduler), else the usable cores no node keeps; unchanged (any core) when no node
        keeps any."""
        kept: dict[str, frozenset[int]] = {}
        allowed = usable | isolated_cpus()
        for node in nodes:
            try:
                kept[node.name] = parse_cpu_list(node.cpus)
            except ValueError as exc:
                raise GraphError(f"graph {self.name}, node {node.name}: cpus: {exc}") from None
            if not kept[node.name] <= allowed:
                raise GraphError(f"graph {self.name}, node {node.name}: cpus {node.cpus!r}: core(s) "
                                 f"{cpu_list(kept[node.name] - allowed)} are not among this machine's usable cores "
                                 f"({cpu_list(allowed)}; nproc, taskset -p $$, /sys/devices/system/cpu/isolated)")
        reserved = frozenset().union(*kept.values())
        if not reserved:
            return nodes
        if shutil.which("taskset") is None:
            raise GraphError(f"graph {self.name}: keeping cores (cpus) needs taskset, which is not on PATH: install "
                             "util-linux (apt-get install util-linux), or leave the cores unset")
        rest = usable - reserved
        if not rest:
            raise GraphError(f"graph {self.name}: the nodes' cpus keep every usable core ({cpu_list(usable)}) for "
                             f"{sorted(name for name, cpus in kept.items() if cpus)}: leave at least one core for the "
                             "graph's other processes")
        return [dataclasses.replace(node, cpus=cpu_list(kept[node.name] or rest)) for node in nodes]

    def _priority(self, node: NodeSpec, text: dict[str, str], typed: dict[str, Any]) -> int:
        priority = self._substitute(node.priority, text, typed)
        if type(priority) is not int or not 0 <= priority <= 99:
            raise GraphError(f"graph {self.name}, node {node.name}: priority must be 0 (normal scheduling) or a "
                             f"SCHED_FIFO priority 1–99, got {priority!r}")
        return priority

    def _substitute(self, value: Any, text: dict[str, str], typed: dict[str, Any]) -> Any:
        if not isinstance(value, str):
            return value
        whole = _ARG.fullmatch(value)
        if whole:
            self.argument(whole.group(1))
            return typed[whole.group(1)]
        for name in _ARG.findall(value):
            self.argument(name)
        return _ARG.sub(lambda m: text[m.group(1)], value)


def graph_file(name: str) -> Path:
    path = Path(name)
    if path.suffix in (".yaml", ".yml") and path.exists():
        return path
    return config_path("graphs", f"{name}.yaml")


def load_graph(name: str) -> Graph:
    """Load config/graphs/NAME.yaml (or a path to a graph file)."""
    path = graph_file(name)
    if not path.exists():
        known = sorted(p.stem for p in config_path("graphs").glob("*.yaml"))
        raise GraphError(f"no graph {name!r} (looked for {path}); known graphs: {known}")
    try:
        data = load_yaml(path.read_text(), str(path)) or {}
    except yaml.YAMLError as exc:
        raise GraphError(f"{path}: not a valid graph file: {exc}") from None
    try:
        arguments = tuple(
            Argument(
                name=arg_name,
                default=str(spec.get("default", "")),
                description=str(spec.get("description", "")),
                type=str(spec.get("type", "str")),
                choices=tuple(str(c) for c in spec.get("choices") or ()),
            )
            for arg_name, spec in (data.get("arguments") or {}).items()
        )
        for arg in arguments:
            if arg.type not in _TYPES:
                raise GraphError(f"{path}: argument {arg.name}: type {arg.type!r} is not one of {list(_TYPES)}")
            arg.convert(arg.default)
        nodes = []
        for i, spec in enumerate(data.get("nodes") or []):
            if "executable" not in spec:
                raise GraphError(f"{path}: nodes[{i}] has no 'executable'")
            nodes.append(
                NodeSpec(
                    executable=spec["executable"],
                    name=spec.get("name", spec["executable"]),
                    required=bool(spec.get("required", True)),
                    parameters=dict(spec.get("parameters") or {}),
                    remappings=tuple(tuple(pair) for pair in (spec.get("remappings") or {}).items()),
                    ros=bool(spec.get("ros", True)),
                    arguments=tuple(str(a) for a in spec.get("arguments") or ()),
                    when=tuple((str(k), tuple(str(x) for x in v) if isinstance(v, list) else (str(v),))
                               for k, v in (spec.get("when") or {}).items()),
                    nice=spec.get("nice", 0),
                    priority=spec.get("priority", 0),
                    stop_timeout_s=spec.get("stop_timeout_s", NodeSpec.stop_timeout_s),
                    container=str(spec.get("container", "")),
                    cpus=str(spec.get("cpus", "")),
                )
            )
            if nodes[-1].container and not nodes[-1].ros:
                raise GraphError(f"{path}: nodes[{i}] ({nodes[-1].name}): only a ROS node can share the process of "
                                 f"container {nodes[-1].container!r}")
            if not _ARG.search(nodes[-1].cpus):
                try:
                    parse_cpu_list(nodes[-1].cpus)
                except ValueError as exc:
                    raise GraphError(f"{path}: nodes[{i}] ({nodes[-1].name}): cpus: {exc}") from None
            if type(nodes[-1].nice) is not int or not 0 <= nodes[-1].nice <= 19:
                raise GraphError(f"{path}: nodes[{i}] ({nodes[-1].name}): nice must be an integer 0–19, "
                                 f"got {nodes[-1].nice!r}")
            if type(nodes[-1].stop_timeout_s) not in (int, float) or not nodes[-1].stop_timeout_s > 0:
                raise GraphError(f"{path}: nodes[{i}] ({nodes[-1].name}): stop_timeout_s must be a number of "
                                 f"seconds > 0, got {nodes[-1].stop_timeout_s!r}")
    except (AttributeError, TypeError) as exc:
        raise GraphError(f"{path}: malformed graph file ({exc})") from None
    if not nodes:
        raise GraphError(f"{path}: the graph has no nodes")
    return Graph(
        name=path.stem,
        description=str(data.get("description", "")),
        arguments=arguments,
        nodes=tuple(nodes),
        source=path,
        unavailable=str(data.get("unavailable", "")),
    )


def processes(nodes: Sequence[NodeSpec]) -> list[tuple[NodeSpec, ...]]:
    """The processes that run ``nodes`` (resolved): each container's nodes together, in the place of its first node
    and in their order, every other node alone."""
    groups: dict[str, list[NodeSpec]] = {}
    for node in nodes:
        groups.setdefault(node.container or f"\0{node.name}", []).append(node)
    for name, members in groups.items():
        for what in ("nice", "priority", "cpus"):
            if len({getattr(m, what) for m in members}) > 1:
                raise GraphError(f"container {name!r}: its nodes ask different {what} "
                                 f"{[getattr(m, what) for m in members]}")
        executables = [m.executable for m in members]
        if len(set(executables)) < len(executables):  # (ROS arguments address a node by its executable's name)
            raise GraphError(f"container {name!r}: two nodes of one executable ({executables}); run one of them in "
                             "a process of its own (container: '')")
    return [tuple(members) for members in groups.values()]


def process_name(members: Sequence[NodeSpec]) -> str:
    """The name of one process of :func:`processes`: its container's when it runs several nodes, else its node's."""
    return members[0].container if len(members) > 1 else members[0].name
