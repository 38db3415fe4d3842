"""`g1-teleop topic list|echo|hz`: the graph's topics from a pip environment without `ros2 topic`.

list: every topic with its types and endpoint counts once discovery has settled. echo: the messages of one
topic as YAML (type discovered from the graph, QoS matching its publishers, so best-effort and latched
publishers are heard). hz: the rate and the period's min/max/std over a sliding window, every second.
Exit codes: 0, 2 when no publisher (list: no node) appears within --timeout (one line saying what to check).
"""

from __future__ import annotations

import argparse
import sys
import time

from g1_teleop.tools.cli_node import CliNode, GraphUnreachable, cli_node
from g1_teleop.tools.graph_topics import find_topic
from g1_teleop.tools.message_fields import field, to_yaml
from g1_teleop.tools.topic_rate import RateWindow

# `list` waits until the graph has shown no new topic or node for this long: longer than the 3 s period at which a
# Fast DDS participant announces itself (its lease_duration_announcementperiod), since a participant busy when this
# one started may be heard only at its next announcement (1.5 s once listed the policy alone out of five nodes).
SETTLE_S = 3.5


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"


def list_topics(session: CliNode, timeout_s: float) -> None:
    """Print ``name [types]  N publishers, M subscribers`` per topic, sorted by name, once discovery has settled:
    another node found, nothing new for SETTLE_S and the endpoints of every known node in (each has its /rosout
    publisher). Raises GraphUnreachable when no other node appears within ``timeout_s``."""
    node = session.node
    seen: list[list] = []
    changed = time.monotonic()

    def settled() -> bool:
        nonlocal changed
        nodes = node.get_node_names_and_namespaces()
        graph = [node.get_topic_names_and_types(), nodes]
        if graph != seen:
            seen[:], changed = graph, time.monotonic()
        return (len(nodes) > 1 and time.monotonic() - changed >= SETTLE_S
                and node.count_publishers("/rosout") >= len(nodes))

    if not session.spin_until(settled, timeout_s):
        if len(node.get_node_names_and_namespaces()) <= 1:
            raise GraphUnreachable(f"no node found within {timeout_s:g} s ({session.where()}): is the graph running, "
                                   "with the same ROS_DOMAIN_ID?")
        print(f"discovery had not settled within {timeout_s:g} s: the list may lack topics (a longer --timeout "
              "waits more)", file=sys.stderr)
    for name, types in sorted(node.get_topic_names_and_types()):
        print(f"{name} [{', '.join(types)}]  {_count(node.count_publishers(name), 'publisher')}, "
              f"{_count(node.count_subscribers(name), 'subscriber')}")


def echo(session: CliNode, name: str, count: int | None, path: str, timeout_s: float) -> None:
    """Print ``count`` messages (None: until Ctrl-C) of ``name``, or their field ``path``, each ended by ---."""
    if count is not None and count < 1:
        raise ValueError(f"--count {count}: give at least 1")
    topic = find_topic(session, name, timeout_s)
    if path:
        field(topic.msg_class(), path)  # a wrong path fails now, with the fields there are
    received = 0

    def on_message(msg: object) -> None:
        nonlocal received
        print(to_yaml(field(msg, path) if path else msg), end="---\n", flush=True)
        received += 1

    session.node.create_subscription(topic.msg_class, topic.name, on_message, topic.qos)
    session.spin_until(lambda: count is not None and received >= count, None)


def hz(session: CliNode, name: str, window: int, duration_s: float | None, timeout_s: float) -> None:
    """Print the rate of ``name`` every second, for ``duration_s`` (None: until Ctrl-C)."""
    topic = find_topic(session, name, timeout_s, depth=100)
    rates = RateWindow(window)
    session.node.create_subscription(topic.msg_class, topic.name, lambda _: rates.add(time.monotonic()), topic.qos,
                                     raw=True)
    print(f"{topic.name} [{topic.type_name}]: arrival rate over the last {window} periods", flush=True)
    end = None if duration_s is None else time.monotonic() + duration_s
    reported = 0  # messages received when the last line was printed
    while end is None or time.monotonic() < end:
        session.spin_until(lambda: False, 1.0 if end is None else min(1.0, end - time.monotonic()))
        figures = rates.figures()
        print(figures.line() if figures and rates.received > reported else "no new messages", flush=True)
        reported = rates.received


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="topic_command", required=True)
    listing = sub.add_parser("list", help="the graph's topics with their types and endpoint counts")
    listing.add_argument("--timeout", type=float, default=5.0, help="longest wait for discovery to settle, s")
    echo_parser = sub.add_parser("echo", help="print a topic's messages as YAML")
    hz_parser = sub.add_parser("hz", help="a topic's rate and period statistics, every second")
    for command in (echo_parser, hz_parser):
        command.add_argument("name", help="topic, relative to --namespace (e.g. joint_states) or absolute (/clock)")
        command.add_argument("--namespace", default="", help="the graph's ROS namespace, e.g. /g1")
        command.add_argument("--timeout", type=float, default=5.0, help="seconds to wait for a publisher")
    echo_parser.add_argument("--once", action="store_const", const=1, dest="count", help="one message, then exit")
    echo_parser.add_argument("--count", type=int, default=None, help="this many messages, then exit")
    echo_parser.add_argument("--field", default="", help="print only this field, e.g. position or header.stamp")
    hz_parser.add_argument("--window", type=int, default=10000, help="periods the statistics cover")
    hz_parser.add_argument("--duration", type=float, default=None, help="stop after this many seconds")


def run_from_args(args: argparse.Namespace) -> int:
    command = f"g1-teleop topic {args.topic_command}"
    try:
        with cli_node(f"topic_{args.topic_command}", getattr(args, "namespace", "")) as session:
            if args.topic_command == "list":
                list_topics(session, args.timeout)
            elif args.topic_command == "echo":
                echo(session, args.name, args.count, args.field, args.timeout)
            else:
                hz(session, args.name, args.window, args.duration, args.timeout)
    except (GraphUnreachable, ValueError) as exc:
        print(f"{command}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        pass
    return 0
