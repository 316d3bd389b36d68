"""Small real runs for the report tests (imported by test_charts, test_report, test_report_browser).

A tiny JSONL dataset holds a document whose text contains ``<script>alert(1)</script>``, ``&``
and ``<b>``; the run combines it with the built-in dataset and four chunker configurations.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

HOSTILE_TEXT = (
    "Alpha & Omega ferry rules. The parser saw <script>alert(1)</script> in the notice board text. "
    "Beta gamma delta epsilon are the harbour cranes. Zeta eta theta iota kappa lambda mu. "
    "Nu xi omicron pi rho sigma tau upsilon. Phi chi psi omega, and <b>bold</b> claims about tides."
)

FILLER = [
    "The lighthouse keeper logs the tide every morning at six.",
    "Fishing boats leave the harbour before dawn in summer.",
    "The ferry timetable changes on the first of October.",
    "Storm warnings are raised by the coast guard station.",
    "Visitors buy tickets at the kiosk beside the pier.",
    "The harbour master inspects moorings each Friday.",
]

CONFIGS = [
    "fixed(chunk_size=40, chunk_overlap=0, unit='tokens')",
    "fixed(chunk_size=80, chunk_overlap=20, unit='tokens')",
    "sentence(max_chars=300)",
    "paragraph(max_words=80)",
]


def write_tiny_dataset(folder: Path) -> str:
    """Write the tiny JSONL dataset into ``folder``; return its spec."""
    folder.mkdir(parents=True, exist_ok=True)
    docs = {"hostile": HOSTILE_TEXT}
    for d in range(3):
        sentences = [FILLER[(i + d) % len(FILLER)] for i in range(18)]
        paragraphs = [" ".join(sentences[i : i + 3]) for i in range(0, 18, 3)]
        docs[f"harbour-{d}"] = "\n\n".join(paragraphs)
    questions = []
    s = HOSTILE_TEXT.index("<script>")
    questions.append(
        {
            "id": "q-script",
            "text": "What did the <parser> see & where?",
            "evidence": [
                {"doc_id": "hostile", "start": s, "end": s + len("<script>alert(1)</script> in the notice")}
            ],
        }
    )
    a = HOSTILE_TEXT.index("Alpha & Omega")
    b = HOSTILE_TEXT.index("<b>bold</b>")
    questions.append(
        {
            "id": "q-amp",
            "text": "Which rules & claims?",
            "evidence": [
                {"doc_id": "hostile", "start": a, "end": a + 25},
                {"doc_id": "hostile", "start": b, "end": b + 28},
            ],
        }
    )
    for d in range(3):
        text = docs[f"harbour-{d}"]
        for j, needle in enumerate(FILLER[:4]):
            pos = text.find(needle, 100 * j)
            if pos < 0:
                pos = text.find(needle)
            questions.append(
                {
                    "id": f"q{d}-{j}",
                    "text": f"Question {j} about harbour {d}?",
                    "evidence": [{"doc_id": f"harbour-{d}", "start": pos, "end": pos + len(needle)}],
                }
            )
    with open(folder / "documents.jsonl", "w", encoding="utf-8") as fh:
        for doc_id, text in docs.items():
            fh.write(json.dumps({"id": doc_id, "text": text}) + "\n")
    with open(folder / "questions.jsonl", "w", encoding="utf-8") as fh:
        for q in questions:
            fh.write(json.dumps(q) + "\n")
    return f"jsonl:{folder}?name=tiny"


def real_run(tmp: Path, configs=CONFIGS, builtin: bool = True):
    """Run the benchmark on the tiny dataset (and the built-in one) and save it in ``tmp/run``."""
    from chunkeval.benchmarks.runner import run

    spec = write_tiny_dataset(tmp / "tiny")
    datasets = ["builtin", spec] if builtin else [spec]
    # budgets off (they are on by default): these tests hand-check a verdict ranked at k = 5
    results = run(datasets, list(configs), retriever="tfidf", ks=(1, 3, 5, 10), budgets=())
    results.save(tmp / "run")
    return results, tmp / "run"


def expected_chart_labels(configs, x, y, verdict, label_of, drawn=None):
    """A quality-cost chart's labels: one per position, gid and the name of each configuration there.

    Returns ``{gid: [(config, expected name), ...]}``: configurations at one (cost, quality)
    share a label whose gid joins them with ``|``; the configuration to use is named
    "<label> — use", the highest scoring one (the cheapest of the tied top) "<label> —
    highest score" when the one to use scores less (:func:`expected_label_text` writes the
    label). ``drawn`` is the chart's quality column (default: the verdict's); on a chart of
    another one the highest is "<label> — highest <verdict's metric>", since its point need
    not be the highest on the y axis.
    """
    from chunkeval.verdict.answer import use_of

    use = use_of(verdict) if verdict is not None else ""
    where = {c: i for i, c in enumerate(configs)}
    top = [c for c in (verdict.top or [verdict.best]) if c in where] if verdict is not None else []
    best = min(top, key=lambda c: (x[where[c]], c)) if top and use not in top else ""
    highest = ""
    if verdict is not None:
        highest = " — highest score" if drawn in (None, verdict.metric) else f" — highest {verdict.metric}"
    spots: dict = {}
    for c, xi, yi in zip(configs, x, y, strict=True):
        spots.setdefault((round(float(xi), 9), round(float(yi), 9)), []).append(c)
    out = {}
    for members in spots.values():
        lines = []
        for c in members:
            suffix = " — use" if c == use else highest if c == best else ""
            lines.append((c, label_of(c) + suffix))
        out["annotation:" + "|".join(members)] = lines
    return out


#: The verdict's words after a marked configuration's name: " — use", " — highest score" on
#: a chart of the verdict's metric, " — highest <the verdict's metric>" on another's.
MARKS = re.compile(r" — (use|highest score|highest \S+@\S+)$")


def expected_label_text(members):
    """The text of one position's label from :func:`expected_chart_labels`' ``members``.

    Each marked configuration on a line of its own, first, then the others on one line
    ("same point: A, B and 2 more"); without a mark one name a line, or past three
    "<n> at one point: A,\\nB and <n - 2> more".
    """
    lines = [line for _, line in members]
    marked = [line for line in lines if MARKS.search(line)]
    rest = [line for line in lines if not MARKS.search(line)]
    if not marked:
        if len(rest) <= 3:
            return "\n".join(rest)
        return f"{len(rest)} at one point: {rest[0]},\n{rest[1]} and {len(rest) - 2} more"
    if rest:
        more = f" and {len(rest) - 2} more" if len(rest) > 2 else ""
        marked.append("same point: " + ", ".join(rest[:2]) + more)
    return "\n".join(marked)
