r"""Loader for SQuAD-format JSON (v1.1 and v2.0 layouts).

``{"data": [{"title": str, "paragraphs": [{"context": str, "qas": [{"id",
"question", "answers": [{"text", "answer_start"}], "is_impossible"?}]}]}]}``

Mapping to chunkeval:

- one document per article: its paragraphs' contexts joined with ``"\n\n"``;
  every answer offset is shifted by its paragraph's offset in the joined text.
  The document id is the article title (``"article-<i>"`` when the title is
  empty); a repeated title gets ``"-2"``, ``"-3"``, ... appended;
- one question per ``qas`` item, id = the SQuAD ``id`` (a JSON integer id,
  as COVID-QA's, is kept as its decimal string: ``262`` -> ``"262"``); with several answers
  the **first** answer is the evidence and all answers are kept in
  ``metadata["answers"]``;
- ``evidence="answer"`` (default): the part is the answer span and its
  ``text`` is the quote checked by :meth:`Dataset.validate`;
  ``evidence="sentence"``: the part is the sentence(s) of the paragraph that
  overlap the answer, from :func:`chunkeval.text.sentence_spans` (the answer
  text is still checked against the context);
- an answer whose ``answer_start`` is off (the text at that offset is not
  the answer text) is *relocated* to the exact occurrence of its text
  within ``relocate`` code points of the published offset (default
  :data:`RELOCATE_DEFAULT`, 5), when there is exactly one such occurrence;
  none, or two or more (ambiguous), is a problem naming both offsets.
  Every move is counted in ``provenance["relocated_answers"]`` and the
  question's ``metadata["relocated_from"]`` keeps the published offset.
  ``relocate=0`` restores the strict check. On by default because
  annotation exports slip by a character or three (COVID-QA as published:
  234 of 1,380 answers, by -1, +2 or +3) and the exact text, the small
  window and the refusal of ambiguous matches leave no room for a wrong
  span, while refusing the file would leave the published dataset
  unusable;
- unanswerable questions (``is_impossible`` true, or no answers) are an error
  by default; with ``skip_impossible=True`` they are skipped and counted in
  ``provenance["skipped_impossible"]`` (never silently);
- ``metadata["_source"]`` is a JSON path such as
  ``"xquad.en.json:data[3].paragraphs[2].qas[1]"``; the article title is in
  the document's ``metadata["title"]``;
- the file is UTF-8; a byte-order mark at its start is ignored. A file
  without articles or without (loaded) questions is an error; a record of
  the wrong type (e.g. ``answers`` an object instead of a list, a negative
  or non-integer ``answer_start``) is a problem named by its JSON path.

References
----------
Rajpurkar, P., Zhang, J., Lopyrev, K. & Liang, P. (2016). SQuAD: 100,000+
Questions for Machine Comprehension of Text. EMNLP. (v2.0 adds
``is_impossible``: Rajpurkar, Jia & Liang, 2018.)
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from chunkeval._json import is_int, loads_strict
from chunkeval.datasets._io import read_text
from chunkeval.datasets.dataset import (
    QUOTES_KEY,
    SOURCE_KEY,
    Dataset,
    DatasetError,
    checked_dataset,
)
from chunkeval.errors import UsageError
from chunkeval.types import Document, EvidenceSpan, Question

__all__ = ["EVIDENCE_MODES", "RELOCATE_DEFAULT", "load_squad", "relocated_start"]

EVIDENCE_MODES = ("answer", "sentence")
#: How far (code points) an answer is moved, at most, to its exact text.
RELOCATE_DEFAULT = 5
PARAGRAPH_SEPARATOR = "\n\n"


def _kind(value: object) -> str:
    return "null" if value is None else type(value).__name__


def _answer_problem(k: int, answer: Any) -> str | None:
    """What is wrong with ``answers[k]`` (``None`` when it is well-formed)."""
    if not isinstance(answer, dict):
        return f"answers[{k}] must be an object {{text, answer_start}}, got {_kind(answer)}"
    bad = []
    if not isinstance(answer.get("text"), str):
        got = _kind(answer["text"]) if "text" in answer else "nothing"
        bad.append(f"'text' must be a string, got {got}")
    start = answer.get("answer_start")
    if not is_int(start):
        got = repr(start) if "answer_start" in answer else "nothing"
        bad.append(f"'answer_start' must be an integer, got {got}")
    elif start < 0:
        bad.append(f"'answer_start' must be >= 0, got {start}")
    return f"answers[{k}]: " + ", ".join(bad) if bad else None


def relocated_start(context: str, text: str, start: int, distance: int) -> tuple[int | None, str]:
    """The exact occurrence of ``text`` nearest ``start``, within ``distance`` code points.

    Parameters
    ----------
    context : str
        The paragraph.
    text : str
        The answer text (non-empty).
    start : int
        The published ``answer_start`` (code points).
    distance : int
        The largest move allowed, in code points (0: none).

    Returns
    -------
    (start, why) : tuple
        ``(new_start, "")`` when exactly one occurrence starts within
        ``[start - distance, start + distance]``; ``(None, reason)`` when
        none or several do (the reason names the offsets found).
    """
    lo = max(0, start - distance)
    window = context[lo : start + distance + len(text)]
    found: list[int] = []
    i = window.find(text)
    while i != -1:
        found.append(lo + i)
        i = window.find(text, i + 1)
    if len(found) == 1:
        return found[0], ""
    if not found:
        return None, f"no exact occurrence within {distance} characters"
    return None, f"ambiguous: occurs at {found} within {distance} characters"


def load_squad(
    path: str | Path,
    evidence: str = "answer",
    skip_impossible: bool = False,
    name: str | None = None,
    relocate: int = RELOCATE_DEFAULT,
) -> Dataset:
    """Load a SQuAD-format JSON file (see the module docstring for the mapping).

    Parameters
    ----------
    path : str or Path
        The JSON file.
    evidence : {"answer", "sentence"}, default "answer"
        Evidence part per question: the first answer's span, or the
        sentence(s) containing it.
    skip_impossible : bool, default False
        Skip unanswerable questions (counted in ``provenance``) instead of
        reporting them as problems.
    name : str, optional
        Dataset name; defaults to the file name without ``.json``.
    relocate : int, default :data:`RELOCATE_DEFAULT`
        The largest move (code points) of an answer whose text is not at its
        ``answer_start`` to its one exact occurrence nearby (see the module
        docstring); 0 refuses every such answer.

    Returns
    -------
    Dataset
        Validated; one document per article.

    Raises
    ------
    DatasetError
        Listing every problem: missing or non-UTF-8 file, invalid JSON (line
        and column), malformed records (JSON path), answers whose text differs
        from the context at ``answer_start``, unanswerable questions (unless
        skipped), duplicate question ids.
    UsageError
        If ``evidence`` is not one of :data:`EVIDENCE_MODES` or ``relocate``
        is negative.
    """
    if evidence not in EVIDENCE_MODES:
        raise UsageError(f"evidence must be one of {EVIDENCE_MODES}, got {evidence!r}")
    if not is_int(relocate) or relocate < 0:
        raise UsageError(f"relocate must be an integer >= 0 (code points), got {relocate!r}")
    path = Path(path)
    label = path.name
    name = name or (path.name[:-5] if path.name.endswith(".json") else path.name)
    text, problem = read_text(path, label, strip_bom=True)
    if text is None:
        assert problem is not None  # read_text gives either the text or the problem
        raise DatasetError(f"dataset {name!r}: cannot read {path}", [problem])
    try:
        root = loads_strict(text)
    except json.JSONDecodeError as err:
        raise DatasetError(
            f"dataset {name!r}: invalid JSON",
            [f"{label}:{err.lineno}: invalid JSON ({err.msg} at column {err.colno})"],
        ) from None
    except RecursionError:
        raise DatasetError(
            f"dataset {name!r}: invalid JSON", [f"{label}: invalid JSON (nested too deeply)"]
        ) from None
    except ValueError as err:  # e.g. an integer literal longer than Python allows
        raise DatasetError(f"dataset {name!r}: invalid JSON", [f"{label}: invalid JSON ({err})"]) from None
    data = root.get("data") if isinstance(root, dict) else None
    if not isinstance(data, list):
        raise DatasetError(
            f"dataset {name!r}: not SQuAD format",
            [f"{label}: top level must be an object with a 'data' list of articles"],
        )
    if not data:
        raise DatasetError(f"dataset {name!r}: empty", [f"{label}: no documents ('data' is empty)"])

    split_sentences: Callable[[str], list[tuple[int, int]]] | None = None
    if evidence == "sentence":
        from chunkeval.text import sentence_spans

        split_sentences = sentence_spans

    problems: list[str] = []
    docs: list[Document] = []
    questions: list[Question] = []
    used_ids: set[str] = set()
    skipped = relocated = 0
    for ai, article in enumerate(data):
        aloc = f"{label}:data[{ai}]"
        if not isinstance(article, dict) or not isinstance(article.get("paragraphs"), list):
            problems.append(f"{aloc}: article must be an object with a 'paragraphs' list")
            continue
        title = article.get("title")
        base = title if isinstance(title, str) and title.strip() else f"article-{ai}"
        doc_id, k = base, 1
        while doc_id in used_ids:
            k += 1
            doc_id = f"{base}-{k}"
        used_ids.add(doc_id)

        pieces: list[str] = []
        offset = 0
        for pi, para in enumerate(article["paragraphs"]):
            ploc = f"{aloc}.paragraphs[{pi}]"
            if not isinstance(para, dict) or not isinstance(para.get("context"), str):
                problems.append(f"{ploc}: paragraph must be an object with a 'context' string")
                continue
            context = para["context"]
            if pieces:
                offset += len(PARAGRAPH_SEPARATOR)
            sentences = None
            qas = para.get("qas")
            if qas is None:
                qas = []
            if not isinstance(qas, list):
                problems.append(f"{ploc}: 'qas' must be a list of questions, got {_kind(qas)}")
                qas = []
            for qi, qa in enumerate(qas):
                qloc = f"{ploc}.qas[{qi}]"
                if not isinstance(qa, dict):
                    problems.append(f"{qloc}: question must be an object")
                    continue
                qid, qtext = qa.get("id"), qa.get("question")
                if is_int(qid):  # published as a JSON number (COVID-QA): its decimal string, no loss
                    qid = str(qid)
                if not isinstance(qid, str) or not isinstance(qtext, str):
                    problems.append(f"{qloc}: 'id' must be a string or an integer and 'question' a string")
                    continue
                answers = qa.get("answers")
                if answers is None:
                    answers = []
                if not isinstance(answers, list):
                    problems.append(
                        f"{qloc}: question {qid!r}: 'answers' must be a list of "
                        f"{{text, answer_start}} objects, got {_kind(answers)}"
                    )
                    continue
                if qa.get("is_impossible") or not answers:
                    if skip_impossible:
                        skipped += 1
                    else:
                        why = "is_impossible" if qa.get("is_impossible") else "no answers"
                        problems.append(
                            f"{qloc}: question {qid!r} is unanswerable ({why}); "
                            "load with skip_impossible=true to skip and count such questions"
                        )
                    continue
                answer_bad = [b for k, a in enumerate(answers) if (b := _answer_problem(k, a))]
                if answer_bad:
                    problems.append(f"{qloc}: question {qid!r}: " + "; ".join(answer_bad))
                    continue
                first = answers[0]
                if not first["text"]:
                    problems.append(
                        f"{qloc}: question {qid!r}: answers[0] has an empty 'text'; give the answer's "
                        "text (the evidence is checked against it)"
                    )
                    continue
                a_start = first["answer_start"]
                a_end = a_start + len(first["text"])
                inside = 0 <= a_start < a_end <= len(context)
                moved_from = None
                if not inside or context[a_start:a_end] != first["text"]:
                    new_start, why = (
                        relocated_start(context, first["text"], a_start, relocate)
                        if relocate
                        else (None, f"relocate={relocate}")
                    )
                    if new_start is None:
                        problems.append(
                            (
                                f"{qloc}: answer span [{a_start}, {a_end}) is outside the "
                                f"paragraph (length {len(context)})"
                                if not inside
                                else f"{qloc}: answer text {first['text']!r} differs from the context "
                                f"at answer_start {a_start}: {context[a_start:a_end]!r}"
                            )
                            + f" (not relocated: {why}); correct its answer_start"
                            + ("" if why.startswith("ambiguous") else " or allow a larger relocate=")
                        )
                        continue
                    moved_from, a_start = a_start, new_start
                    a_end = a_start + len(first["text"])
                    relocated += 1
                if evidence == "answer":
                    start, end, quote = a_start, a_end, first["text"]
                else:
                    if sentences is None:
                        assert split_sentences is not None  # set above for evidence="sentence"
                        sentences = split_sentences(context)
                    hit = [(s, e) for s, e in sentences if s < a_end and e > a_start]
                    start, end = (hit[0][0], hit[-1][1]) if hit else (a_start, a_end)
                    start, end = min(start, a_start), max(end, a_end)
                    quote = None
                meta = {
                    SOURCE_KEY: qloc,
                    QUOTES_KEY: (quote,),
                    "answers": tuple(a["text"] for a in answers),
                    "answer_span": (offset + a_start, offset + a_end),
                    "title": title if isinstance(title, str) else None,
                    **({"relocated_from": offset + moved_from} if moved_from is not None else {}),
                }
                questions.append(
                    Question(qid, qtext, (EvidenceSpan(doc_id, offset + start, offset + end),), meta)
                )
            pieces.append(context)
            offset += len(context)
        text = PARAGRAPH_SEPARATOR.join(pieces)
        docs.append(Document(doc_id, text, {SOURCE_KEY: aloc, "title": title, "n_paragraphs": len(pieces)}))
    if not questions and not problems:
        why = f" ({skipped} unanswerable question(s) skipped)" if skipped else ""
        problems.append(f"{label}: no questions{why}")

    provenance = {
        "format": "squad",
        "source": str(path),
        "version": root.get("version"),
        "evidence": evidence,
        "skip_impossible": skip_impossible,
        "n_articles": len(data),
        "skipped_impossible": skipped,
        "relocate": relocate,
        "relocated_answers": relocated,
    }
    return checked_dataset(name, docs, questions, provenance, problems)
