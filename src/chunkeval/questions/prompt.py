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
    whatever comes back is read defensively by :func:`parse_reply`: the whole reply as JSON,
    else the inside of a fenced code block, else the first JSON object with a ``question`` key
    embedded in prose.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import string
from dataclasses import dataclass
from pathlib import Path

from chunkeval.errors import UsageError

__all__ = [
    "DEFAULT_PROMPT",
    "MULTI_TASK",
    "REPLY_SCHEMA",
    "SINGLE_TASK",
    "Prompt",
    "ReplyError",
    "parse_reply",
]

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


def _question_object(value: object) -> tuple[str, list[str]] | None:
    """``(question, excerpts)`` of a decoded reply, or None when it has not that shape."""
    if not isinstance(value, dict):
        return None
    question, excerpts = value.get("question"), value.get("excerpts")
    if isinstance(excerpts, str):  # a single excerpt not wrapped in a list
        excerpts = [excerpts]
    if not isinstance(question, str) or not question.strip() or not isinstance(excerpts, list):
        return None
    if not excerpts or not all(isinstance(e, str) and e.strip() for e in excerpts):
        return None
    return question.strip(), list(excerpts)


def _embedded_objects(text: str):
    """Every JSON value that starts at a ``{`` of ``text``, in order."""
    decoder = json.JSONDecoder()
    pos = text.find("{")
    while pos >= 0:
        try:
            value, _ = decoder.raw_decode(text, pos)
        except (json.JSONDecodeError, RecursionError):
            value = None
        if value is not None:
            yield value
        pos = text.find("{", pos + 1)


def parse_reply(text: str) -> tuple[str, list[str]]:
    """Read ``{"question": ..., "excerpts": [...]}`` out of a model's reply.

    Tried in order: the whole reply as JSON; the body of each fenced code block
    (```` ```json ... ``` ````); the first JSON object embedded in the prose that has the
    shape. A lone string under ``excerpts`` is taken as a list of one.

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
        non-empty ``excerpts`` strings.
    """
    candidates: list[object] = []
    with contextlib.suppress(json.JSONDecodeError, RecursionError):
        candidates.append(json.loads(text))
    for block in _FENCE.findall(text):
        try:
            candidates.append(json.loads(block))
        except (json.JSONDecodeError, RecursionError):
            continue
    for value in [*candidates, *_embedded_objects(text)]:
        found = _question_object(value)
        if found is not None:
            return found
    flat = " ".join(text.split())
    shown = flat if len(flat) <= 80 else flat[:77] + "..."
    raise ReplyError(f'no {{"question": ..., "excerpts": [...]}} object in the reply {shown!r}')
