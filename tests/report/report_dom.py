"""Read an HTML report with the standard library: its elements, their attributes and text."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser

VOID = frozenset({"meta", "br", "input", "link", "img", "hr", "col", "source", "wbr"})


@dataclass(slots=True)
class Node:
    """One element: its tag, its attributes, its children and the text directly inside it."""

    tag: str
    attrs: dict[str, str]
    children: list[Node] = field(default_factory=list)
    text: str = ""

    @property
    def classes(self) -> set[str]:
        """The tokens of its ``class`` attribute."""
        return set(self.attrs.get("class", "").split())

    def find_all(self, tag: str | None = None, cls: str | None = None) -> list[Node]:
        """Every descendant (not itself) with ``tag`` and/or the class ``cls``."""
        found = []
        for child in self.children:
            if (tag is None or child.tag == tag) and (cls is None or cls in child.classes):
                found.append(child)
            found.extend(child.find_all(tag, cls))
        return found

    def all_text(self) -> str:
        """Its text and its descendants' text, in order."""
        return self.text + "".join(child.all_text() for child in self.children)

    def title(self) -> str | None:
        """The text of its ``<title>`` child (SVG tooltips), if any."""
        return next((c.text for c in self.children if c.tag == "title"), None)


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {})
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].children.append(node)
        if tag not in VOID:
            self.stack.append(node)

    def handle_endtag(self, tag: str) -> None:
        for n in range(len(self.stack) - 1, 0, -1):
            if self.stack[n].tag == tag:
                del self.stack[n:]
                return

    def handle_data(self, data: str) -> None:
        self.stack[-1].text += data


def parse(html: str) -> Node:
    """Parse a whole page."""
    builder = _Builder()
    builder.feed(html)
    builder.close()
    return builder.root
