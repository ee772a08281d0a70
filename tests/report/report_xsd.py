"""Check an XML document against an XSD, for the small part of XML Schema junit.xsd uses.

Neither lxml nor xmlschema is installed, so this reads the schema with
ElementTree and applies its rules: global ``xs:element`` declarations with a
simple ``type`` (text only) or an ``xs:complexType`` (``mixed`` or not) whose
content is ``xs:sequence`` / ``xs:choice`` of ``xs:element ref=...`` with
``minOccurs`` / ``maxOccurs``, and ``xs:attribute`` with ``use`` and a type
among xs:string, xs:decimal, xs:int and xs:nonNegativeInteger. Anything else
in the schema is refused rather than ignored. A content model becomes a
regular expression over the children's tags.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING
from xml.etree import ElementTree as ET

if TYPE_CHECKING:
    from pathlib import Path

XS = "{http://www.w3.org/2001/XMLSchema}"
TYPES = {
    "xs:string": r"(?s).*",
    "xs:decimal": r"[+-]?(\d+(\.\d*)?|\.\d+)",
    "xs:int": r"[+-]?\d+",
    "xs:nonNegativeInteger": r"\+?\d+",
}


@dataclass(frozen=True, slots=True)
class Declaration:
    """What the schema allows for one element."""

    attributes: dict[str, tuple[str, bool]]
    """name -> (type, required)."""
    content: str | None
    """Regex over ``<tag>`` tokens of the children; None: a simple type, text only."""
    text_type: str | None
    mixed: bool


def read_schema(path: Path) -> dict[str, Declaration]:
    """Read the global element declarations of an XSD file."""
    root = ET.parse(path).getroot()  # noqa: S314 (our own schema file)
    declarations = {}
    for element in root:
        if element.tag != f"{XS}element":
            raise ValueError(f"unsupported top-level schema item {element.tag}")
        declarations[element.attrib["name"]] = _declaration(element)
    return declarations


def _declaration(element: ET.Element) -> Declaration:
    if "type" in element.attrib:
        return Declaration({}, None, element.attrib["type"], mixed=True)
    complex_type = element.find(f"{XS}complexType")
    if complex_type is None:
        raise ValueError(f"element {element.attrib['name']} has neither type nor complexType")
    attributes: dict[str, tuple[str, bool]] = {}
    content = ""
    for item in complex_type:
        if item.tag == f"{XS}attribute":
            kind = item.attrib.get("type", "xs:string")
            if kind not in TYPES:
                raise ValueError(f"unsupported attribute type {kind}")
            attributes[item.attrib["name"]] = (kind, item.attrib.get("use") == "required")
        elif item.tag in {f"{XS}sequence", f"{XS}choice"}:
            content = _model(item)
        else:
            raise ValueError(f"unsupported complexType item {item.tag}")
    mixed = complex_type.attrib.get("mixed") == "true"
    return Declaration(attributes, content, None, mixed=mixed)


def _model(item: ET.Element) -> str:
    if item.tag == f"{XS}element":
        body = re.escape(f"<{item.attrib['ref']}>")
    elif item.tag == f"{XS}sequence":
        body = "".join(_model(child) for child in item)
    elif item.tag == f"{XS}choice":
        body = "|".join(_model(child) for child in item)
    else:
        raise ValueError(f"unsupported content model item {item.tag}")
    low = item.attrib.get("minOccurs", "1")
    high = item.attrib.get("maxOccurs", "1")
    return f"(?:{body}){{{low},{'' if high == 'unbounded' else high}}}"


def validate(document: ET.Element, schema: dict[str, Declaration]) -> list[str]:
    """Return every rule ``document`` breaks (empty: it is valid)."""
    problems: list[str] = []
    _check(document, schema, document.tag, problems)
    return problems


def _check(element: ET.Element, schema: dict[str, Declaration], where: str, out: list[str]) -> None:
    declaration = schema.get(element.tag)
    if declaration is None:
        out.append(f"{where}: element <{element.tag}> is not declared")
        return
    _check_attributes(element, declaration, where, out)
    if declaration.content is None:
        if len(element):
            out.append(f"{where}: a text-only element has children")
        return
    tokens = "".join(f"<{child.tag}>" for child in element)
    if not re.fullmatch(declaration.content, tokens):
        out.append(f"{where}: children {tokens or '(none)'} do not match the content model")
    texts = [element.text, *(child.tail for child in element)]
    if not declaration.mixed and any(t and t.strip() for t in texts):
        out.append(f"{where}: text is not allowed here")
    for n, child in enumerate(element):
        _check(child, schema, f"{where}/{child.tag}[{n}]", out)


def _check_attributes(
    element: ET.Element, declaration: Declaration, where: str, out: list[str]
) -> None:
    for name, value in element.attrib.items():
        if name not in declaration.attributes:
            out.append(f"{where}: attribute {name!r} is not allowed")
        elif not re.fullmatch(TYPES[declaration.attributes[name][0]], value):
            out.append(
                f"{where}: attribute {name}={value!r} is not {declaration.attributes[name][0]}"
            )
    for name, (_, required) in declaration.attributes.items():
        if required and name not in element.attrib:
            out.append(f"{where}: required attribute {name!r} is missing")
