"""``python -m g1_teleop.nodes NODE [--ros-args …]``: how the pip runner starts a node.

A Ctrl-C that arrives while the node is still importing its libraries ends the process quietly with
exit code 0, as a Ctrl-C after start-up does, instead of a traceback.
"""

import importlib
import sys

NODES = ("xr_input", "retarget", "policy", "sim_bridge")


def main() -> None:
    if len(sys.argv) < 2 or sys.argv[1] not in NODES:
        sys.exit(f"usage: python -m g1_teleop.nodes {{{','.join(NODES)}}} [--ros-args ...]")
    name = sys.argv.pop(1)
    try:
        module = importlib.import_module(f"g1_teleop.nodes.{name}")
    except KeyboardInterrupt:
        sys.exit(0)
    module.main()


if __name__ == "__main__":
    main()
