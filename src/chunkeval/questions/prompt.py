"""The prompt that asks a language model for a question and its excerpts, and reading its reply.

The model is shown one passage (a single-part question) or two passages from different
paragraphs of one document (a multi-part question), verbatim, and asked for one JSON object::

    {"question": "...", "excerpts": ["verbatim excerpt", ...]}

Prompt
    :data:`DEFAULT_PROMPT` is a :class:`string.Template`: ``${passages}`` is replaced by the
    passage(s), each between ``<<<`` and ``>>>`` lines after a ``Passage N:`` line, and
    ``${task}`` by :data:`SINGLE_TASK` or :data:`MULTI_TASK`. A team replaces the prompt with
    a file (``draft-questions --prompt FILE``) holding the same placeholders (``${passages}``
    is required; ``$$`` is a literal ``$``). The prompt's SHA-256 is recorded with the
    questions, so a reviewer can tell which prompt wrote them.

Reply
    The endpoint is asked for structured output (:data:`REPLY_SCHEMA`) where it supports it;
    whatever comes back is read defensively by :func:`parse_reply`. Reasoning blocks
    (``<think>...</think>``, ``<thinking>``, ``<reasoning>``, ``<reflection>``, ``<thought>``,
    ``<scratchpad>``) are removed first and never read as the answer (:func:`answer_text`);
    then the whole reply is tried as JSON, else the inside of each fenced code block, else the
    JSON objects embedded in prose. The question loses its invisible and bidirectional
    control characters (:func:`visible_text`). Reading is linear in the reply's length, which
    is bounded (:data:`MAX_REPLY_CHARS`).
"""

from __future__ import annotations

import hashlib
import json
import re
import string
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from chunkeval._json import BadJSON, loads_bounded
from chunkeval.errors import UsageError
from chunkeval.text.ignorable import strip_ignorable

__all__ = [
    "DEFAULT_PROMPT",
    "MAX_REPLY_CHARS",
    "MULTI_TASK",
    "REPLY_SCHEMA",
    "SINGLE_TASK",
    "Prompt",
    "ReplyError",
    "answer_text",
    "parse_reply",
    "visible_text",
]

#: Longest reply read, in characters (a question and its excerpts need a few thousand).
MAX_REPLY_CHARS = 200_000
#: JSON objects embedded in prose that are tried, at most (each try is linear in the reply).
_MAX_EMBEDDED = 16

DEFAULT_PROMPT = """\
You write evaluation questions for a document retrieval system.

${task}

Rules:
- The question must be answerable from the excerpts alone, and a person who has not read the
  passage must understand it (no "this passage", "the text", "the author").
- Ask in your own words: do not copy phrases of the excerpts into the question.
- Each excerpt is copied verbatim from a passage, character for character: a whole sentence
  or a contiguous part of one, at least a few words long, never a paraphrase or a summary.
- Reply with one JSON object and nothing else:
  {"question": "...", "excerpts": ["...", "..."]}

${passages}
"""

SINGLE_TASK = (
    "Read the passage below and write one question that it answers, with the excerpt(s) of the "
    "passage that contain the answer."
)
MULTI_TASK = (
    "Read the two passages below (from one document) and write one question that needs both "
    "passages to answer, with one excerpt from each passage that together contain the answer."
)

#: JSON schema of the reply, for endpoints with structured output (``response_format``).
REPLY_SCHEMA: dict = {
    "type": "object",
    "properties": {
        "question": {"type": "string"},
        "excerpts": {"type": "array", "items": {"type": "string"}, "minItems": 1},
    },
    "required": ["question", "excerpts"],
    "additionalProperties": False,
}

_FENCE = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\n?(.*?)```", re.DOTALL)


class ReplyError(ValueError):
    """A reply that holds no usable ``{"question": ..., "excerpts": [...]}`` object (one line)."""


@dataclass(frozen=True)
class Prompt:
    """A question prompt: its template text and where it came from.

    Parameters
    ----------
    text : str
        A :class:`string.Template` with ``${passages}`` and optionally ``${task}``.
    source : str
        ``"built-in"`` or the file it was read from.
    """

    text: str
    source: str = "built-in"

    @classmethod
    def load(cls, path: str | Path | None) -> Prompt:
        """The built-in prompt (``path=None``) or the prompt of a UTF-8 file, checked.

        Raises
        ------
        UsageError
            When the file cannot be read, lacks ``${passages}`` or has another placeholder.
        """
        if path is None:
            return cls(DEFAULT_PROMPT)
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"prompt file {path}: cannot be read ({exc})") from None
        return cls(text, str(path)).checked()

    def checked(self) -> Prompt:
        """Return the prompt; raise :class:`UsageError` for a template that cannot be filled."""
        names = {m.group("named") or m.group("braced") for m in string.Template.pattern.finditer(self.text)}
        invalid = [m for m in string.Template.pattern.finditer(self.text) if m.group("invalid") is not None]
        unknown = sorted(n for n in names - {"passages", "task", None})
        if "passages" not in names or unknown or invalid:
            raise UsageError(
                f"prompt {self.source}: the template must hold ${{passages}} (and may hold ${{task}}); "
                + (f"unknown placeholder(s) {', '.join('$' + n for n in unknown)}; " if unknown else "")
                + "write $$ for a literal $"
            )
        return self

    @property
    def sha256(self) -> str:
        """Hex SHA-256 of the template's UTF-8 text (what the provenance records)."""
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()

    def render(self, passages: list[str]) -> str:
        """The user message for one request.

        Parameters
        ----------
        passages : list of str
            One passage (single-part) or two (multi-part), verbatim.

        Returns
        -------
        str
            The template with ``${passages}`` and ``${task}`` filled.
        """
        blocks = "\n\n".join(f"Passage {i}:\n<<<\n{p}\n>>>" for i, p in enumerate(passages, 1))
        task = MULTI_TASK if len(passages) > 1 else SINGLE_TASK
        return string.Template(self.text).substitute(passages=blocks, task=task)


#: An opening or closing tag of a reasoning block.
_REASONING_TAG = re.compile(r"<(/?)(?:think|thinking|reasoning|reflection|thought|scratchpad)\b[^<>]*>", re.I)
#: The start of a JSON object with a key: where an embedded object may begin.
_OBJECT_START = re.compile(r'\{\s*"')
#: Categories of characters a question never needs besides the default-ignorable ones:
#: controls, surrogates and private use.
_INVISIBLE = frozenset({"Cc", "Cs", "Co"})


def answer_text(text: str) -> str:
    """A reply without its reasoning blocks: what the model gave as its answer.

    Blocks between an opening and a closing reasoning tag (nested ones included) are removed;
    a closing tag without an opening one (a chat template that opens the block in the prompt)
    removes everything before it; a block never closed removes everything after its opening
    tag (the answer was not reached). One pass over the tags: linear in the text.

    Parameters
    ----------
    text : str
        A reply's message content.

    Returns
    -------
    str
        The text outside reasoning blocks, pieces joined as they were.
    """
    out: list[str] = []
    depth, pos = 0, 0
    for tag in _REASONING_TAG.finditer(text):
        if not tag[1]:  # an opening tag
            if depth == 0:
                out.append(text[pos : tag.start()])
            depth += 1
            continue
        if depth == 0:  # closing a block opened before the reply began
            out = []
        else:
            depth -= 1
        if depth == 0:
            pos = tag.end()
    if depth == 0:
        out.append(text[pos:])
    return "".join(out)


def visible_text(text: str) -> str:
    """``text`` without invisible characters, on one line.

    Default-ignorable code points (:func:`chunkeval.text.ignorable.strip_ignorable`:
    bidirectional overrides and isolates, zero-width spaces and joiners, soft hyphens,
    byte-order marks), controls, surrogates and private-use characters are removed (a
    control that is whitespace becomes a space), then runs of whitespace become one space.
    """
    kept = (
        (" " if c.isspace() else "") if unicodedata.category(c) in _INVISIBLE else c
        for c in strip_ignorable(text)
    )
    return " ".join("".join(kept).split())


def _question_object(value: object) -> tuple[str, list[str]] | None:
    """``(question, excerpts)`` of a decoded reply, or None when it has not that shape."""
    if not isinstance(value, dict):
        return None
    question, excerpts = value.get("question"), value.get("excerpts")
    if isinstance(excerpts, str):  # a single excerpt not wrapped in a list
        excerpts = [excerpts]
    if not isinstance(question, str) or not visible_text(question) or not isinstance(excerpts, list):
        return None
    if not excerpts or not all(isinstance(e, str) and e.strip() for e in excerpts):
        return None
    return visible_text(question), list(excerpts)


def _decoded(text: str) -> object:
    try:
        return loads_bounded(text, 4 * MAX_REPLY_CHARS, max_depth=16)
    except BadJSON:
        return None


def _embedded_objects(text: str) -> Iterator[object]:
    """The JSON objects that start at the first :data:`_MAX_EMBEDDED` ``{"`` of ``text``.

    Each is decoded from its start to where it ends (:meth:`json.JSONDecoder.raw_decode`),
    so the work is at most :data:`_MAX_EMBEDDED` times the text's length.
    """
    decoder = json.JSONDecoder()
    for n, start in enumerate(_OBJECT_START.finditer(text)):
        if n == _MAX_EMBEDDED:
            return
        try:
            _, end = decoder.raw_decode(text, start.start())
        except (ValueError, RecursionError):
            continue
        value = _decoded(text[start.start() : end])  # again, bounded: depth and numbers
        if value is not None:
            yield value


def parse_reply(text: str) -> tuple[str, list[str]]:
    """Read ``{"question": ..., "excerpts": [...]}`` out of a model's reply.

    Reasoning blocks are removed first (:func:`answer_text`). Then tried in order: the whole
    reply as JSON; the body of each fenced code block (```` ```json ... ``` ````); the first
    JSON object embedded in the prose that has the shape. A lone string under ``excerpts`` is
    taken as a list of one; the question loses its invisible characters (:func:`visible_text`).

    Parameters
    ----------
    text : str
        The reply's message content.

    Returns
    -------
    (str, list of str)
        The question (stripped) and its excerpts, exactly as the model wrote them.

    Raises
    ------
    ReplyError
        When no candidate has a non-empty ``question`` string and a non-empty list of
        non-empty ``excerpts`` strings, or the reply is longer than :data:`MAX_REPLY_CHARS`.
    """
    if len(text) > MAX_REPLY_CHARS:
        raise ReplyError(f"a reply of {len(text):,} characters, more than the {MAX_REPLY_CHARS:,} read")
    text = answer_text(text)
    candidates = [_decoded(text), *(_decoded(block) for block in _FENCE.findall(text))]
    for value in [*candidates, *_embedded_objects(text)]:
        found = _question_object(value)
        if found is not None:
            return found
    flat = " ".join(text.split())
    shown = flat if len(flat) <= 80 else flat[:77] + "..."
    raise ReplyError(f'no {{"question": ..., "excerpts": [...]}} object in the reply {shown!r}')
