# Copyright 2026 the retrychaos authors. Licensed under the MIT License.
"""Reading YAML the way scenario files need it: safe, strict about keys, with line numbers.

The loader is PyYAML's ``SafeLoader`` with two changes: a key repeated in one
mapping is an error (PyYAML silently keeps the last one, hiding a typo), and
dates stay text (``start_date: 2026-01-01`` is the string tool arguments need,
not a ``datetime.date`` that JSON cannot carry).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import yaml
from yaml.constructor import ConstructorError
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["LineFinder", "parse_yaml"]

_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"
_MERGE_TAG = "tag:yaml.org,2002:merge"


class _Loader(yaml.SafeLoader):
    """``SafeLoader`` without timestamps and with duplicate keys rejected."""

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:  # noqa: FBT001, FBT002 - PyYAML's signature
        """Construct a mapping, refusing a key written twice."""
        seen: set[str] = set()
        for key_node, _ in node.value:
            if not isinstance(key_node, ScalarNode) or key_node.tag == _MERGE_TAG:
                continue
            if key_node.value in seen:
                raise ConstructorError(
                    "while constructing a mapping",
                    node.start_mark,
                    f"found duplicate key {key_node.value!r}",
                    key_node.start_mark,
                )
            seen.add(key_node.value)
        return super().construct_mapping(node, deep=deep)


# Resolvers are looked up per class; a copy keeps SafeLoader itself unchanged.
_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != _TIMESTAMP_TAG]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


class LineFinder:
    """Finds the 1-based line of a location (keys and indexes) in a composed document."""

    def __init__(self, root: Node | None) -> None:
        """Remember the document's root node."""
        self._root = root

    def __call__(self, loc: tuple[str | int, ...]) -> int | None:
        """The line of the deepest part of ``loc`` the document has."""
        node = self._root
        line = None if node is None else node.start_mark.line + 1
        for part in loc:
            child = _child(node, part)
            if child is None:
                break
            key_node, node = child
            line = key_node.start_mark.line + 1
        return line


def _child(node: Node | None, part: str | int) -> tuple[Node, Node] | None:
    """``(where the part is written, its value)``, or None if absent."""
    if isinstance(node, MappingNode):
        for key_node, value_node in node.value:
            if isinstance(key_node, ScalarNode) and key_node.value == str(part):
                return key_node, value_node
    elif isinstance(node, SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
        item: Node = node.value[part]
        return item, item
    return None


def parse_yaml(text: str) -> tuple[object, Callable[[tuple[str | int, ...]], int | None]]:
    """Parse one YAML document: the data and a line finder over it.

    Raises:
        yaml.YAMLError: The text is not valid YAML (its ``problem_mark`` has the line).
    """
    loader = _Loader(text)
    try:
        root = loader.get_single_node()
        data = None if root is None else loader.construct_document(root)
    finally:
        loader.dispose()
    return data, LineFinder(root)
