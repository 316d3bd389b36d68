"""A small team documentation repository: a files: folder of Markdown, text, HTML and Word files.

Every paragraph is about its own made-up subject (distinct words, so a lexical retriever finds
it), every question quotes one sentence of one paragraph (``questions.jsonl``, quotes only).
Each file is written from its blocks (a heading, then paragraphs), kept beside the folder in
``NAME.blocks.json``, so that helpers edit every format alike, the way a team's week does: a
paragraph added, a word changed, a quote edited, paragraphs merged.
"""

from __future__ import annotations

import json
from html import escape
from pathlib import Path

from _documents import run, write_docx

_SUBJECTS = [
    "ferry", "glacier", "harbour", "lantern", "meadow", "orchard", "quarry", "rampart",
    "saddle", "tannery", "vineyard", "windmill", "abbey", "bakery", "canal", "dairy",
    "estuary", "foundry", "granary", "hamlet", "island", "jetty", "kiln", "lighthouse",
]  # fmt: skip
_THINGS = [
    "copper", "linen", "amber", "cobalt", "saffron", "walnut", "marble", "velvet",
    "cedar", "pewter", "indigo", "basalt", "quartz", "tallow", "juniper", "garnet",
    "flint", "hazel", "ochre", "willow", "nickel", "poplar", "thistle", "umber",
]  # fmt: skip
#: The files, in id order; questions ``q{file index}{paragraph index}``.
FILES = ("faq.md", "guide.md", "notes/handbook.docx", "notes/ops.txt", "policy.html", "setup.md")
#: Paragraphs per file (one question each).
PARAGRAPHS = 4


def _paragraph(i: int) -> str:
    s, t = _SUBJECTS[i % len(_SUBJECTS)], _THINGS[(i * 7) % len(_THINGS)]
    return (
        f"The {s} keeps {t} crates behind gate {i + 3}. "
        f"Visitors to the {s} must sign the {t} ledger before noon. "
        f"Repairs of the {s} roof use {t} nails only."
    )


def _model_path(root: Path) -> Path:
    return root.parent / f"{root.name}.blocks.json"


def _blocks(root: Path) -> dict[str, list[str]]:
    return json.loads(_model_path(root).read_text(encoding="utf-8"))


def _write(root: Path, blocks: dict[str, list[str]]) -> None:
    """Write every file from its blocks (heading, paragraphs) in its own format."""
    _model_path(root).write_text(json.dumps(blocks), encoding="utf-8")
    for name, (heading, *paragraphs) in blocks.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if name.endswith(".html"):
            body = "".join(f"<p>{escape(p)}</p>\n" for p in paragraphs)
            html = f"<!DOCTYPE html>\n<html><body>\n<h1>{escape(heading)}</h1>\n{body}</body></html>\n"
            path.write_text(html, encoding="utf-8")
        elif name.endswith(".docx"):
            write_docx(path, "".join(f"<w:p>{run(text)}</w:p>" for text in (heading, *paragraphs)))
        else:
            path.write_text(f"# {heading}\n\n" + "\n\n".join(paragraphs) + "\n", encoding="utf-8")


def write_repository(root: Path) -> Path:
    """Write the folder: documents and ``questions.jsonl``; returns ``root``."""
    questions, blocks = [], {}
    for f, name in enumerate(FILES):
        paragraphs = [_paragraph(f * PARAGRAPHS + p) for p in range(PARAGRAPHS)]
        blocks[name] = [name.rsplit("/", 1)[-1].split(".")[0].title(), *paragraphs]
        for p, text in enumerate(paragraphs):
            subject = _SUBJECTS[(f * PARAGRAPHS + p) % len(_SUBJECTS)]
            questions.append(
                {
                    "id": f"q{f}{p}",
                    "text": f"Which ledger do visitors to the {subject} sign?",
                    "evidence": [{"doc_id": name, "quote": text.split(". ")[1] + "."}],
                }
            )
    root.mkdir(parents=True, exist_ok=True)
    _write(root, blocks)
    write_questions(root, questions)
    return root


def read_questions(root: Path) -> list[dict]:
    """The questions of ``questions.jsonl``."""
    lines = (root / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def write_questions(root: Path, questions: list[dict]) -> None:
    """Write ``questions.jsonl``."""
    text = "".join(json.dumps(q) + "\n" for q in questions)
    (root / "questions.jsonl").write_text(text, encoding="utf-8")


def add_paragraph(root: Path, name: str, text: str) -> None:
    """Insert a paragraph after a file's heading (every quote of the file moves)."""
    blocks = _blocks(root)
    blocks[name].insert(1, text)
    _write(root, blocks)


def replace(root: Path, name: str, old: str, new: str) -> None:
    """Replace the first occurrence of ``old`` in a file's blocks."""
    blocks = _blocks(root)
    for i, block in enumerate(blocks[name]):
        if old in block:
            blocks[name][i] = block.replace(old, new, 1)
            _write(root, blocks)
            return
    raise AssertionError(f"{old!r} is not in {name}")


def merge_paragraphs(root: Path, name: str) -> None:
    """Join a file's paragraphs into one (no quote changes; a paragraph chunker now cuts them)."""
    blocks = _blocks(root)
    heading, *paragraphs = blocks[name]
    blocks[name] = [heading, " ".join(paragraphs)]
    _write(root, blocks)


def edit_quote(root: Path, question_id: str, old: str, new: str) -> None:
    """Edit a quoted sentence in its document and in ``questions.jsonl`` alike."""
    questions = read_questions(root)
    (q,) = [q for q in questions if q["id"] == question_id]
    part = q["evidence"][0]
    replace(root, part["doc_id"], part["quote"], part["quote"].replace(old, new))
    part["quote"] = part["quote"].replace(old, new)
    write_questions(root, questions)
