"""A small team documentation repository: a files: folder of Markdown and text, questions as quotes.

Every paragraph is about its own made-up subject (distinct words, so a lexical retriever finds
it), every question quotes one sentence of one paragraph. Helpers edit the folder the way a
team's week does: a paragraph added, a word changed, a quote edited.
"""

from __future__ import annotations

import json
from pathlib import Path

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
FILES = ("guide.md", "setup.md", "faq.md", "notes/ops.txt", "notes/history.rst", "policy.md")
#: Paragraphs per file, and questions per file (the first sentence of each paragraph).
PARAGRAPHS = 4


def _paragraph(i: int) -> str:
    s, t = _SUBJECTS[i % len(_SUBJECTS)], _THINGS[(i * 7) % len(_THINGS)]
    return (
        f"The {s} keeps {t} crates behind gate {i + 3}. "
        f"Visitors to the {s} must sign the {t} ledger before noon. "
        f"Repairs of the {s} roof use {t} nails only."
    )


def write_repository(root: Path) -> Path:
    """Write the folder: documents and ``questions.jsonl``; returns ``root``."""
    questions = []
    for f, name in enumerate(FILES):
        paragraphs = [_paragraph(f * PARAGRAPHS + p) for p in range(PARAGRAPHS)]
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# {name}\n\n" + "\n\n".join(paragraphs) + "\n", encoding="utf-8")
        for p, text in enumerate(paragraphs):
            quote = text.split(". ")[1] + "."
            subject = _SUBJECTS[(f * PARAGRAPHS + p) % len(_SUBJECTS)]
            questions.append(
                {
                    "id": f"q{f}{p}",
                    "text": f"Which ledger do visitors to the {subject} sign?",
                    "evidence": [{"doc_id": name, "quote": quote}],
                }
            )
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
    path = root / name
    head, rest = path.read_text(encoding="utf-8").split("\n\n", 1)
    path.write_text(f"{head}\n\n{text}\n\n{rest}", encoding="utf-8")


def replace(root: Path, name: str, old: str, new: str) -> None:
    """Replace the first occurrence of ``old`` in a file."""
    path = root / name
    text = path.read_text(encoding="utf-8")
    assert old in text, (name, old)
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def edit_quote(root: Path, question_id: str, old: str, new: str) -> None:
    """Edit a quoted sentence in its document and in ``questions.jsonl`` alike."""
    questions = read_questions(root)
    (q,) = [q for q in questions if q["id"] == question_id]
    part = q["evidence"][0]
    replace(root, part["doc_id"], part["quote"], part["quote"].replace(old, new))
    part["quote"] = part["quote"].replace(old, new)
    write_questions(root, questions)
