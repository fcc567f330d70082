"""The obviously correct text of an HTML tree: a walk over lxml's events in
Python, element by element (what repetend's WARC reader did before it let
libxslt do the same in C); the reader's fast path is held equal to it."""

from __future__ import annotations

from repetend.corpus.read_warc import _BLOCK, _DROP, _SPACES, _clean_lines, _text_transform


def walk_text(tree) -> str:
    from lxml import etree

    parts: list[str] = []
    title = tree.find(".//title")
    if title is not None and title.text:
        parts.append(title.text)
        parts.append("\n")
    body = tree.find(".//body")
    root = body if body is not None else tree
    walker = etree.iterwalk(root, events=("start", "end", "comment", "pi"))
    for event, el in walker:
        tag = el.tag if isinstance(el.tag, str) else None
        if event in ("comment", "pi"):
            if el.tail:
                parts.append(el.tail)
            continue
        name = tag.lower().rpartition("}")[2] if tag else ""
        if event == "start":
            if name in _DROP:
                walker.skip_subtree()
                continue
            if name in _BLOCK:
                parts.append("\n")
            if el.text:
                parts.append(el.text)
        else:
            if name in _BLOCK:
                parts.append("\n")
            if el.tail and el is not root:
                parts.append(el.tail)
    lines = (_SPACES.sub(" ", ln).strip() for ln in "".join(parts).split("\n"))
    return "\n".join(ln for ln in lines if ln)


def text_before(tree) -> str:
    """The reader's text before the compiled line layout (session 13): the XSLT
    program's text as ``str``, then the Python ``_clean_lines``; the new path is held
    byte-equal to it.  (Not always ``walk_text``: on ``<html/>text`` libxml2 leaves
    the text outside the root element, where the XSLT program sees it and the walk
    does not — so it was before, too.)"""
    body = tree.find(".//body")
    root = body if body is not None else tree
    title = tree.find(".//title")
    head = title.text + "\n" if title is not None and title.text else ""
    if not isinstance(root.tag, str) or root.tag in _DROP:
        return _clean_lines(head)
    return _clean_lines(head + str(_text_transform()(root)))
