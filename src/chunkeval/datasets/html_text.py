"""The text a browser shows of an HTML file: its encoding, what is hidden, how space collapses.

**Encoding** (the HTML standard's order, without its statistical guess): a byte-order mark
(UTF-8, UTF-16 LE/BE); else the ``<meta charset>`` or ``<meta http-equiv="Content-Type"
content="...; charset=...">`` within the first 1024 bytes, its label mapped as browsers map it
(``iso-8859-1``, ``latin1`` and ``ascii`` are Windows-1252; a ``utf-16`` label on a page
without a byte-order mark is UTF-8, since the page was readable as ASCII); else UTF-8.
Bytes invalid in that encoding become U+FFFD and are counted with the offset of the first;
an unknown label is named and UTF-8 read. Never a guess from the bytes' statistics.

**Visible text** (BeautifulSoup's tree, walked here): ``script``, ``style``, ``template``,
``noscript``, ``head``, ``title`` and ``svg`` hold no visible text; an element with the
``hidden`` attribute or an inline ``display: none`` is left out with all it holds, and so is
the text under an inline ``visibility: hidden`` (a descendant with ``visibility: visible``
shows again, as in CSS); each left-out element holding text is counted.

**Spaces and lines** (CSS ``white-space``): text collapses each run of whitespace to one
space, and spaces at a line's start and end go; inside ``pre``, ``textarea``, ``listing``,
``xmp`` and ``plaintext``, and under an inline ``white-space: pre``, ``pre-wrap`` or
``break-spaces``, the text is kept character for character (``pre-line`` keeps the line
breaks and collapses the rest). As the HTML parser does, CR LF and lone CR become LF and a
line feed right after a ``<pre>`` tag is dropped. Headings, paragraphs and other blocks are
separated by a blank line; list items, table rows and ``br`` end a line; a row's cells are
joined by `` | ``; a no-break space is a space.

**Bounds**: the tree is walked with a stack of its own, not Python's (a page nested a
thousand elements deep is read like a flat one), up to :data:`~chunkeval._limits.MAX_HTML_DEPTH`
elements deep; a deeper page is refused (:class:`~chunkeval._limits.ReaderLimit`).

**Control characters**: the C0 controls other than whitespace (U+0000-U+0008, U+000B,
U+000E-U+001F) and U+007F are removed and counted: a browser shows none of them, and none is
text. (Tab, LF, CR and FF are whitespace.)
"""

from __future__ import annotations

import codecs
import contextvars
import re
from collections import Counter
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from chunkeval._limits import MAX_HTML_DEPTH, MAX_HTML_ELEMENTS, ReaderLimit

if TYPE_CHECKING:
    from bs4 import Tag

__all__ = ["decode_html", "html_text"]

# -------------------------------------------------------------------------------- encoding
_BOMS = ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))
_META = re.compile(rb"<meta\b[^>]*>", re.IGNORECASE)
_CHARSET = re.compile(rb"""charset\s*=\s*["']?\s*([A-Za-z0-9._:\-]+)""", re.IGNORECASE)
#: Labels browsers decode otherwise than Python's codec of the same name (WHATWG Encoding).
_WHATWG = {
    "iso-8859-1": "cp1252",
    "iso8859-1": "cp1252",
    "latin1": "cp1252",
    "latin-1": "cp1252",
    "l1": "cp1252",
    "ascii": "cp1252",
    "us-ascii": "cp1252",
    "windows-1252": "cp1252",
    "utf-16": "utf-8",
    "utf-16le": "utf-8",
    "utf-16be": "utf-8",
    "x-user-defined": "cp1252",
}
_PRESCAN_BYTES = 1024
# The byte offsets a decoding replaced, collected by the error handler below (one handler,
# registered once; the list is the current decoding's).
_BAD_BYTES: contextvars.ContextVar[list[int]] = contextvars.ContextVar("chunkeval_bad_bytes")
_COUNTED = "chunkeval.replace-counted"

#: What starts an element for the count of :func:`html_text` (tags in comments and scripts
#: counted too: an upper bound).
_START_TAG = re.compile(r"<[A-Za-z]")


def _replace_counted(exc: UnicodeError) -> tuple[str, int]:
    """``errors="replace"`` (one U+FFFD per invalid byte), noting each byte's offset."""
    if not isinstance(exc, UnicodeDecodeError):
        raise exc
    _BAD_BYTES.get().extend(range(exc.start, exc.end))
    return "\ufffd" * (exc.end - exc.start), exc.end


codecs.register_error(_COUNTED, _replace_counted)


def _declared(data: bytes) -> str | None:
    """The charset label of the first ``<meta>`` that declares one in the first 1024 bytes."""
    for meta in _META.finditer(data[:_PRESCAN_BYTES]):
        found = _CHARSET.search(meta.group())
        if found is not None:
            return found.group(1).decode("ascii").lower()
    return None


def decode_html(data: bytes) -> tuple[str, str, Counter[str]]:
    """Decode an HTML file's bytes as a browser would, naming what could not be decoded.

    Parameters
    ----------
    data : bytes
        The whole file.

    Returns
    -------
    text : str
        The decoded page (without its byte-order mark).
    encoding : str
        The Python codec used (``"utf-8"``, ``"cp1252"`` ...).
    problems : collections.Counter
        ``"invalid ENCODING byte(s) replaced by U+FFFD (first at byte N)"`` with the number of
        bytes, or ``"unknown charset label 'X' (read as UTF-8)"``; empty for a clean page.
    """
    problems: Counter[str] = Counter()
    body, encoding = data, "utf-8"
    for bom, name in _BOMS:
        if data.startswith(bom):
            body, encoding = data[len(bom) :], name
            break
    else:
        label = _declared(data)
        if label is not None:
            try:
                encoding = codecs.lookup(_WHATWG.get(label, label)).name
            except LookupError:
                problems[f"unknown charset label {label!r} (read as UTF-8)"] += 1
    bad: list[int] = []
    token = _BAD_BYTES.set(bad)
    try:
        text = body.decode(encoding, errors=_COUNTED)
    finally:
        _BAD_BYTES.reset(token)
    if bad:
        offset = bad[0] + (len(data) - len(body))
        problems[f"invalid {encoding} byte(s) replaced by U+FFFD (first at byte {offset})"] += len(bad)
    return text, encoding, problems


# -------------------------------------------------------------------------------- visible text
_SKIPPED = frozenset({"script", "style", "head", "template", "noscript", "svg", "title"})
_LINES = frozenset({"li", "tr", "dt", "dd", "caption", "figcaption", "option"})
_BLOCKS = frozenset(
    {"p", "div", "section", "article", "main", "header", "footer", "nav", "aside", "ul", "ol", "dl",
     "table", "blockquote", "pre", "figure", "form", "fieldset", "address", "details", "summary",
     "h1", "h2", "h3", "h4", "h5", "h6", "hr", "body", "textarea", "listing", "xmp", "plaintext"}
)  # fmt: skip
_PRE_ELEMENTS = frozenset({"pre", "textarea", "listing", "xmp", "plaintext"})
_PRE_VALUES = {"pre": "pre", "pre-wrap": "pre", "break-spaces": "pre", "pre-line": "pre-line"}
_WHITESPACE = re.compile(r"[ \t\n\r\f\xa0]+")  # HTML's ASCII whitespace, and a no-break space
_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")
# the kinds of a walk's tokens: collapsible text, verbatim text, and the marks between them
_TEXT, _LINE, _BLOCK, _CELL, _VERBATIM = 0, 1, 2, 3, 4


def _style(tag: Tag) -> dict[str, str]:
    """The declarations of a tag's inline ``style`` attribute, lower-cased, ``!important`` off."""
    declarations = {}
    for item in str(tag.get("style") or "").split(";"):
        name, sep, value = item.partition(":")
        if sep:
            value = value.lower().replace("!important", "")
            declarations[name.strip().lower()] = " ".join(value.split())
    return declarations


def _hidden_by(tag: Tag, style: dict[str, str]) -> str | None:
    """Why an element and all it holds is not displayed, or None."""
    if tag.has_attr("hidden"):
        return "hidden element (hidden attribute)"
    if style.get("display") == "none":
        return "hidden element (display: none)"
    return None


class _Walk:
    """One page's walk: the pieces of its text and what it left out."""

    def __init__(self) -> None:
        self.tokens: list[tuple[int, str]] = []  # (kind, text): _TEXT, _VERBATIM or a mark
        self.dropped: Counter[str] = Counter()

    def walk(self, root: Tag) -> None:
        """Read the tree under ``root`` in document order, without recursion.

        An explicit stack of the open elements (their children's iterator, white-space mode,
        visibility and the mark that closes them) replaces the call stack: a page nested
        thousands of elements deep is read like a flat one, up to :data:`MAX_HTML_DEPTH`.

        Raises
        ------
        ReaderLimit
            The elements nest deeper than :data:`MAX_HTML_DEPTH`.
        """
        from bs4 import Comment, Doctype, NavigableString, ProcessingInstruction

        # (children still to read, mode inside, visible inside, mark written when it closes)
        # bs4 types children as PageElement; past the strings they are Tags
        stack: list[tuple[Iterator[Any], str, bool, int]] = [(iter(root.children), "normal", True, 0)]
        while stack:
            children, mode, visible, _ = stack[-1]
            child = next(children, None)
            if child is None:
                mark = stack.pop()[3]
                if mark:
                    self.tokens.append((mark, ""))
                continue
            if isinstance(child, (Comment, Doctype, ProcessingInstruction)):
                continue
            if isinstance(child, NavigableString):
                if visible:
                    self.text(str(child), mode)
                continue
            name = child.name
            if name in _SKIPPED:
                continue
            style = _style(child)
            why = _hidden_by(child, style)
            if why is not None:
                if visible and child.get_text().strip():
                    self.dropped[why] += 1
                continue
            seen = visible
            if style.get("visibility") in ("hidden", "collapse"):
                if visible and child.get_text().strip():
                    self.dropped["hidden element (visibility: hidden)"] += 1
                seen = False
            elif style.get("visibility") == "visible":
                seen = True
            inner = mode
            if name in _PRE_ELEMENTS:
                inner = "pre"
            if "white-space" in style:
                inner = _PRE_VALUES.get(
                    style["white-space"].split()[0] if style["white-space"] else "", "normal"
                )
            if name == "br":
                self.tokens.append((_LINE, ""))
                continue
            if name in ("td", "th"):
                self.tokens.append((_CELL, ""))
            mark = _BLOCK if name in _BLOCKS else _LINE if name in _LINES else 0
            if mark:
                self.tokens.append((mark, ""))
            if name == "pre" and child.contents and isinstance(child.contents[0], NavigableString):
                first = str(child.contents[0])
                if first.startswith("\n"):  # the parser drops a line feed right after <pre>
                    child.contents[0].replace_with(first[1:])
            if len(stack) >= MAX_HTML_DEPTH:
                raise ReaderLimit(
                    f"elements nest deeper than {MAX_HTML_DEPTH:,} (the most chunkeval reads; "
                    "a browser shows far fewer)"
                )
            stack.append((iter(child.children), inner, seen, mark))

    def text(self, value: str, mode: str) -> None:
        value = value.replace("\r\n", "\n").replace("\r", "\n")
        removed = _CONTROLS.findall(value)
        if removed:
            self.dropped["C0 control character (never displayed)"] += len(removed)
            value = _CONTROLS.sub("", value)
        if mode == "pre":
            self.tokens.append((_VERBATIM, value))
        elif mode == "pre-line":
            for n, line in enumerate(value.split("\n")):
                if n:
                    self.tokens.append((_LINE, ""))
                self.tokens.append((_TEXT, line))
        else:
            self.tokens.append((_TEXT, value))


def _assemble(tokens: list[tuple[int, str]]) -> str:
    """The text of a walk's tokens.

    Collapsible text collapsed, verbatim text as it is, marks as line ends (a blank line for a
    block), cells joined by `` | ``.
    """
    out: list[str] = []
    pending = 0  # the break due before the next text: 0, _LINE or _BLOCK
    space = cell = False
    line_has_text = False
    for kind, value in tokens:
        if kind in (_LINE, _BLOCK):
            pending = max(pending, kind)
            space = cell = False
            continue
        if kind == _CELL:
            cell = line_has_text and not pending
            space = False
            continue
        if kind == _TEXT:
            collapsed = _WHITESPACE.sub(" ", value)
            if collapsed.startswith(" "):
                space = True
            core = collapsed.strip(" ")
            if not core:
                continue
            after = collapsed.endswith(" ")
        else:
            core, after = value, False
            if not core:
                continue
        if out:
            if pending:
                due = 2 if pending == _BLOCK else 1
                have = len(out[-1]) - len(out[-1].rstrip("\n"))
                out.append("\n" * max(0, due - have))
            elif cell:
                out.append(" | ")
            elif space:
                out.append(" ")
        if pending:
            line_has_text = False
        pending, cell, space = 0, False, after
        out.append(core)
        line_has_text = True
    return "".join(out)


def html_text(markup: str) -> tuple[str, Counter[str]]:
    """The visible text of a decoded HTML page (see the module docstring for every rule).

    Parameters
    ----------
    markup : str
        The page, decoded (:func:`decode_html`).

    Returns
    -------
    text : str
        The visible text, without leading or trailing whitespace (of collapsible text).
    dropped : collections.Counter
        What was left out on purpose, by kind: hidden elements holding text, control
        characters.

    Raises
    ------
    chunkeval._limits.ReaderLimit
        The elements nest deeper than :data:`~chunkeval._limits.MAX_HTML_DEPTH`, or the page
        has more start tags than :data:`~chunkeval._limits.MAX_HTML_ELEMENTS` (counted before
        the tree is built: each element costs the tree about a kilobyte).
    """
    import bs4

    tags = sum(1 for _ in _START_TAG.finditer(markup))
    if tags > MAX_HTML_ELEMENTS:
        raise ReaderLimit(
            f"{tags:,} start tags, more than the {MAX_HTML_ELEMENTS:,} elements chunkeval reads of "
            f"an HTML page (each costs about a kilobyte of memory)"
        )
    soup = bs4.BeautifulSoup(markup, "html.parser")
    walk = _Walk()
    walk.walk(soup)
    return _assemble(walk.tokens), walk.dropped
