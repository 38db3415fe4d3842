"""YAML as the project reads configuration: PyYAML's safe loader, except that a key given twice in one mapping is an
error. ROS-free.

PyYAML keeps the last of two equal keys without a word, so a second ``kp:`` under a joint of the robot
configuration, or a second ``priority:`` under a node of a graph file, would change what reaches a motor while the
file still reads as the first one says. YAML 1.2 requires mapping keys to be unique; ``<<`` merge keys (a graph file's
``<<: *retarget``) still work, and a mapping's own keys override the merged ones as YAML specifies.
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.constructor import ConstructorError
from yaml.nodes import MappingNode

_MERGE_TAG = "tag:yaml.org,2002:merge"


class _UniqueKeyLoader(yaml.SafeLoader):
    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
        first_line: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == _MERGE_TAG:
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                line = first_line.get(key)
            except TypeError:  # an unhashable key: PyYAML's own constructor says so
                continue
            if line is not None:
                raise ConstructorError("while reading a mapping", node.start_mark,
                                       f"found the key {key!r} a second time (first on line {line}); a key may "
                                       "appear once in a mapping", key_node.start_mark)
            first_line[key] = key_node.start_mark.line + 1
        return super().construct_mapping(node, deep)


def load_yaml(text: str, name: str) -> Any:
    """The document in ``text`` (the file ``name``); yaml.YAMLError naming the file, line and column for invalid YAML
    or a repeated key."""
    loader = _UniqueKeyLoader(text)
    loader.name = name  # (the marks of its errors say where)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()
