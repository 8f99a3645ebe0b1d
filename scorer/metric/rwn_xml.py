"""RuWordNet's XML files as (sense text, synset id) pairs: every ``<sense>`` inside a ``<synset>``.

A sense belongs to the innermost ``<synset>`` around it; senses without text,
and synsets without an id, give nothing.

Each file is first scanned with regular expressions (:func:`scan`), several
times faster than the parser. The scan accepts only a narrow shape: UTF-8;
elements with double-quoted attributes; the five predefined entities and
character references; no comments, CDATA, DOCTYPE or processing instructions
(an XML declaration naming UTF-8 aside); no element inside a sense; no
carriage return, no namespace. Anything else, a malformed file included, makes it give up
(None), and the file is read by the full parser instead, streamed
(:func:`parse`), which reports the error. Both give the same pairs:
``tests/test_thesaurus.py`` compares them on the real files and on odd ones.
"""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Iterator

from scorer.errors import ThesaurusError

Pairs = list[tuple[str, str]]

_WS = "[ \t\n]"
_NAME = "[A-Za-z_][A-Za-z0-9_.-]*"
_DECLARATION = re.compile(rf'\ufeff?<\?xml{_WS}+version{_WS}*={_WS}*"1\.[0-9]"'
                          rf'(?:{_WS}+encoding{_WS}*={_WS}*"(?:utf|UTF)-8")?'
                          rf'(?:{_WS}+standalone{_WS}*={_WS}*"(?:yes|no)")?{_WS}*\?>')
_TAG = re.compile(rf'<(/?)({_NAME})((?:{_WS}+{_NAME}{_WS}*={_WS}*"[^"<\t\n]*")*){_WS}*(/?)>')
_ATTRIBUTE = re.compile(rf'({_NAME}){_WS}*={_WS}*"([^"]*)"')
_REFERENCE = re.compile(r"&(?:(amp|lt|gt|quot|apos)|#([0-9]{1,7})|#x([0-9a-fA-F]{1,6}));")
_ENTITIES = {"amp": "&", "lt": "<", "gt": ">", "quot": '"', "apos": "'"}
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\r\ufffe\uffff]|]]>")
_BLANK = re.compile(f"{_WS}*")


def read(files: list[Path]) -> Iterator[tuple[str, str]]:
    """The pairs of every file, in order: scanned, or parsed where the scan gives up."""
    for path in files:
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise ThesaurusError(f"cannot read RuWordNet file {path}: {exc}") from None
        scanned = scan(data)
        yield from scanned if scanned is not None else parse(path)


def parse(path: Path) -> Iterator[tuple[str, str]]:
    """The pairs of one file by the full parser, streamed: each synset is dropped once read."""
    try:
        synset_ids: list[str | None] = []
        parents: list[ET.Element] = []
        for event, element in ET.iterparse(path, events=("start", "end")):
            if event == "start":
                parents.append(element)
                if element.tag == "synset":
                    synset_ids.append(element.get("id"))
                continue
            parents.pop()
            if element.tag == "sense":
                if synset_ids and synset_ids[-1] and element.text:
                    yield element.text, synset_ids[-1]
            elif element.tag == "synset":
                synset_ids.pop()
                if parents:
                    parents[-1].clear()  # the synsets read so far, with their senses
    except (ET.ParseError, OSError) as exc:
        raise ThesaurusError(f"cannot read RuWordNet file {path}: {exc}") from None


def scan(data: bytes) -> Pairs | None:
    """The pairs of one file's bytes, or None where the file is not of the narrow shape the scan
    accepts (module docstring)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if _NOT_XML.search(text) or "xmlns" in text or text.count("&") != sum(1 for m in _REFERENCE.finditer(text) if _char(m)):
        return None
    declared = _DECLARATION.match(text)
    start = declared.end() if declared else (1 if text.startswith("\ufeff") else 0)
    pairs: Pairs = []
    open_tags: list[str] = []
    synset_ids: list[str] = []
    sense_at = -1            # where the open sense's text starts (-1: no sense open)
    roots = tags = 0
    pos = start
    for tag in _TAG.finditer(text, start):
        tags += 1
        closing, name, attributes, empty = tag.groups()
        if not open_tags and not _BLANK.fullmatch(text, pos, tag.start()):
            return None      # text outside the root element
        pos = tag.end()
        if sense_at >= 0 and not (closing and name == "sense"):
            return None      # an element inside a sense
        if closing:
            if attributes or empty or not open_tags or open_tags.pop() != name:
                return None
            if name == "sense":
                sense = _unescaped(text[sense_at:tag.start()])
                if synset_ids and synset_ids[-1] and sense:
                    pairs.append((sense, synset_ids[-1]))
                sense_at = -1
            elif name == "synset":
                synset_ids.pop()
            continue
        values: dict[str, str] | None = {}
        if attributes and (name == "synset" or attributes.count("=") > 1):  # else no name can repeat
            values = _attributes(attributes)
            if values is None:
                return None
        if not open_tags:
            roots += 1
        if empty:
            continue
        open_tags.append(name)
        if name == "sense":
            sense_at = tag.end()
        elif name == "synset":
            synset_ids.append(values.get("id", "") if values else "")
    if open_tags or roots != 1 or text.count("<") != tags + (declared is not None):
        return None          # unclosed, not one root, or a '<' that starts no tag the scan reads
    return pairs if _BLANK.fullmatch(text, pos) else None


def _char(reference: re.Match[str]) -> bool:
    """Whether an entity or character reference stands for a character XML allows."""
    if reference.group(1):
        return True
    code = int(reference.group(2)) if reference.group(2) else int(reference.group(3), 16)
    return code in (0x9, 0xA, 0xD) or 0x20 <= code <= 0xD7FF or 0xE000 <= code <= 0xFFFD or 0x10000 <= code <= 0x10FFFF


def _unescaped(text: str) -> str:
    """``text`` with its (valid) references replaced by their characters."""
    if "&" not in text:
        return text
    return _REFERENCE.sub(lambda m: _ENTITIES[m.group(1)] if m.group(1)
                          else chr(int(m.group(2)) if m.group(2) else int(m.group(3), 16)), text)


def _attributes(attributes: str) -> dict[str, str] | None:
    """A tag's attributes by name, their values unescaped; None when a name repeats."""
    if not attributes:
        return {}
    found = _ATTRIBUTE.findall(attributes)
    values = {name: _unescaped(value) for name, value in found}
    return values if len(values) == len(found) else None
