# Copyright 2026 the retrychaos authors. Licensed under the MIT License.
"""Reading YAML the way scenario files need it: safe, strict about keys, with line numbers.

The loader is PyYAML's ``SafeLoader`` with two changes: a key repeated in one
mapping is an error (PyYAML silently keeps the last one, hiding a typo), and
dates stay text (``start_date: 2026-01-01`` is the string tool arguments need,
not a ``datetime.date`` that JSON cannot carry).

It is also bounded, because a scenario file may come from anyone: at most
:data:`MAX_DEPTH` levels of nesting (deeper documents exhaust Python's
recursion limit in every later step), at most :data:`MAX_NODES` values once
aliases are expanded (a kilobyte of nested aliases otherwise expands to
billions of values), no alias that contains itself, and numbers of at most
:data:`MAX_NUMBER_CHARS` characters (Python refuses to convert integers of
more than 4,300 digits). A document past a bound raises :class:`LimitError`,
a ``yaml.YAMLError`` with the line and what was expected.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

import yaml
from yaml.constructor import ConstructorError
from yaml.error import Mark, MarkedYAMLError
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["MAX_DEPTH", "MAX_NODES", "MAX_NUMBER_CHARS", "LimitError", "LineFinder", "parse_yaml"]

MAX_DEPTH: Final = 64
"""Levels of nesting a scenario document may have, aliases expanded."""
MAX_NODES: Final = 100_000
"""Values (scalars, lists, mappings) a document may hold, aliases expanded."""
MAX_NUMBER_CHARS: Final = 64
"""Characters a number may be written with."""

_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"
_MERGE_TAG = "tag:yaml.org,2002:merge"
_NUMBER_TAGS = frozenset({"tag:yaml.org,2002:int", "tag:yaml.org,2002:float"})


class LimitError(MarkedYAMLError):
    """A document past one of the reader's bounds: what was expected, and where."""

    def __init__(self, mark: Mark | None, *, expected: str, got: str) -> None:
        """Record ``expected`` and ``got`` for the message, at ``mark``."""
        super().__init__(problem=f"expected {expected}, got {got}", problem_mark=mark)
        self.expected = expected
        self.got = got


class _Loader(yaml.SafeLoader):
    """``SafeLoader`` without timestamps, with duplicate keys rejected, and bounded."""

    _depth = 0

    def compose_node(self, parent: Node | None, index: int) -> Node | None:
        """Compose one node, refusing to go deeper than :data:`MAX_DEPTH`."""
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise LimitError(
                    self.peek_event().start_mark,  # type: ignore[no-untyped-call]
                    expected=f"at most {MAX_DEPTH} levels of nesting",
                    got=f"more than {MAX_DEPTH}",
                )
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

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


def _check_size(root: Node) -> None:
    """Refuse a document whose expansion is too deep, too large or self-referencing.

    Aliases make the composed document a graph in which one node may be
    reached many times; each node's expanded size and depth are computed once
    (post-order, without recursion), so the check costs the composed size.
    """
    size: dict[int, tuple[int, int]] = {}  # id -> (values, depth), once finished
    open_: set[int] = set()
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if key in size:
            continue
        kids = _children(node)
        if not children_done:
            if key in open_:
                raise LimitError(
                    node.start_mark, expected="a document without recursive aliases", got="one"
                )
            open_.add(key)
            stack.append((node, True))
            stack.extend((kid, False) for kid in kids if id(kid) not in size)
            continue
        open_.discard(key)
        if isinstance(node, ScalarNode) and node.tag in _NUMBER_TAGS:
            _check_number(node)
        values = 1 + sum(size[id(kid)][0] for kid in kids)
        depth = 1 + max((size[id(kid)][1] for kid in kids), default=0)
        if values > MAX_NODES:
            raise LimitError(
                node.start_mark,
                expected=f"at most {MAX_NODES:,} values with aliases expanded",
                got=f"{values:,}",
            )
        if depth > MAX_DEPTH:
            raise LimitError(
                node.start_mark,
                expected=f"at most {MAX_DEPTH} levels of nesting with aliases expanded",
                got=str(depth),
            )
        size[key] = (values, depth)


def _children(node: Node) -> list[Node]:
    if isinstance(node, SequenceNode):
        return list(node.value)
    if isinstance(node, MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def _check_number(node: ScalarNode) -> None:
    if len(node.value) > MAX_NUMBER_CHARS:
        raise LimitError(
            node.start_mark,
            expected=f"a number of at most {MAX_NUMBER_CHARS} characters",
            got=f"{len(node.value):,} characters",
        )


def parse_yaml(text: str) -> tuple[object, Callable[[tuple[str | int, ...]], int | None]]:
    """Parse one YAML document: the data and a line finder over it.

    Raises:
        yaml.YAMLError: The text is not valid YAML (its ``problem_mark`` has the line),
            or a :class:`LimitError`: it is past one of the reader's bounds.
    """
    loader = _Loader(text)
    try:
        root = loader.get_single_node()
        if root is not None:
            _check_size(root)
        data = None if root is None else loader.construct_document(root)
    finally:
        loader.dispose()
    return data, LineFinder(root)
