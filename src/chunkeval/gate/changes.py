"""What changed in a dataset since the baseline: questions and documents, and when it is too much.

A question is identified by what it asks and what backs it: its text and each evidence part's
document id and exact text (``questions_by_content`` of
:meth:`chunkeval.datasets.Dataset.content_digests`), wherever that text now starts. A document
edit outside every quoted span changes no question; one inside a quote changes exactly the
questions quoting it. :func:`dataset_changes` names the questions and documents added, removed
and edited; :func:`changed_share` is the share of questions a comparison must leave out, and
:data:`STALE_SHARE` the default share beyond which a baseline is *stale* (exit 2 with the
command that re-saves it: :func:`resave_command`).

Against a manifest or baseline saved before content identities were recorded, questions are
identified the older way (text and evidence offsets), so any document edit that moves a quote
counts as an edit of its question, and the comparison is refused as before.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from typing import Any

__all__ = [
    "FIRST_IDS",
    "STALE_SHARE",
    "changed_share",
    "dataset_changes",
    "describe_changes",
    "first_ids",
    "has_content_identity",
    "left_out",
    "resave_command",
]

#: Ids named per kind of change before the rest is counted ("q1, q2, ... and 7 more").
FIRST_IDS = 5
#: The default ``--stale-share``: beyond this share of changed (added, removed or edited)
#: questions the baseline is stale. At 20% the gate still tests four questions in five of
#: what the team asks today, so the paired test keeps most of its power (its questions needed
#: grow by at most a quarter), while a baseline that lost more no longer speaks for today's
#: questions: the changed ones are not gated at all.
STALE_SHARE = 0.2
_CONTENT = "questions_by_content"
_BY_DOCUMENT = "questions_by_document"


def _digest_map(digests: Mapping[str, Any] | None, kind: str) -> dict[str, str] | None:
    part = digests.get(kind) if isinstance(digests, Mapping) else None
    if not isinstance(part, Mapping):
        return None
    return {str(k): str(v) for k, v in part.items()}


def has_content_identity(digests: Mapping[str, Any] | None) -> bool:
    """Whether a manifest's or baseline's ``digests`` of a dataset identify questions by content.

    Parameters
    ----------
    digests : mapping or None
        ``manifest["datasets"][name]["digests"]``.

    Returns
    -------
    bool
        True when it holds ``questions_by_content`` and ``documents`` (saved by a chunkeval
        that records content identities).
    """
    return _digest_map(digests, _CONTENT) is not None and _digest_map(digests, "documents") is not None


def _diff(old: Mapping[str, str], new: Mapping[str, str]) -> tuple[list[str], list[str], list[str]]:
    """(added, removed, edited) ids, each sorted."""
    added = sorted(set(new) - set(old))
    removed = sorted(set(old) - set(new))
    edited = sorted(k for k in set(old) & set(new) if old[k] != new[k])
    return added, removed, edited


def dataset_changes(
    digests_base: Mapping[str, Any] | None,
    digests_cur: Mapping[str, Any] | None,
    ids_base: set[str],
    ids_cur: set[str],
) -> dict[str, list[str]]:
    """Which questions and documents of a dataset were added, removed or edited.

    Parameters
    ----------
    digests_base, digests_cur : mapping or None
        ``{"questions": {id: digest}, "questions_by_content": {id: digest}, "documents": {id:
        digest}}`` of each side's manifest (:meth:`chunkeval.datasets.Dataset.content_digests`);
        None when a side has none.
    ids_base, ids_cur : set of str
        The question ids of each side's ``per_question`` table, used when a side records
        no question digests.

    Returns
    -------
    dict of str to list of str
        ``questions_added``, ``questions_removed``, ``questions_edited``, ``documents_added``,
        ``documents_removed``, ``documents_edited`` (sorted ids) and, when both sides identify
        questions by content, ``questions_moved``: questions unchanged by content whose
        evidence now starts elsewhere (shown, never left out). A removed and an added
        document with the same text are a rename, ``documents_renamed`` (``"old → new"``),
        and a question whose evidence only moved with it (the same texts, in documents of the
        same texts: ``questions_by_document``) is moved, not edited. Questions are edited by content
        when both sides record it, else by text and offsets. A key is left out when that side
        of the change cannot be known: edits and documents without digests on both sides.
    """
    out: dict[str, list[str]] = {}
    cb, cc = _digest_map(digests_base, _CONTENT), _digest_map(digests_cur, _CONTENT)
    qb, qc = _digest_map(digests_base, "questions"), _digest_map(digests_cur, "questions")
    if cb is not None and cc is not None:
        added, removed, edited = _diff(cb, cc)
        out.update(questions_added=added, questions_removed=removed, questions_edited=edited)
        if qb is not None and qc is not None:
            out["questions_moved"] = sorted(
                k for k in set(cb) & set(cc) if cb[k] == cc[k] and qb.get(k) != qc.get(k)
            )
    elif qb is not None and qc is not None:
        added, removed, edited = _diff(qb, qc)
        out.update(questions_added=added, questions_removed=removed, questions_edited=edited)
    else:
        out.update(questions_added=sorted(ids_cur - ids_base), questions_removed=sorted(ids_base - ids_cur))
    db, dc = _digest_map(digests_base, "documents"), _digest_map(digests_cur, "documents")
    if db is not None and dc is not None:
        added, removed, edited = _diff(db, dc)
        renamed = _renamed(db, dc, removed, added)
        if renamed:
            old_ids, new_ids = {a for a, _ in renamed}, {b for _, b in renamed}
            added = [d for d in added if d not in new_ids]
            removed = [d for d in removed if d not in old_ids]
            out["documents_renamed"] = [f"{a} → {b}" for a, b in renamed]
            _follow_renames(out, digests_base, digests_cur)
        out.update(documents_added=added, documents_removed=removed, documents_edited=edited)
    return out


def _renamed(
    db: Mapping[str, str], dc: Mapping[str, str], removed: list[str], added: list[str]
) -> list[tuple[str, str]]:
    """(old id, new id) of removed and added documents with the same text, paired in id order."""
    free: dict[str, list[str]] = {}
    for doc in added:
        free.setdefault(dc[doc], []).append(doc)
    pairs = []
    for doc in removed:
        same = free.get(db[doc])
        if same:
            pairs.append((doc, same.pop(0)))
    return pairs


def _follow_renames(
    out: dict[str, list[str]], digests_base: Mapping[str, Any] | None, digests_cur: Mapping[str, Any] | None
) -> None:
    """Move the edited questions whose parts only moved with a renamed document to ``questions_moved``.

    Such a question's ``questions_by_document`` digest (its text and each part's text with
    its document's *text* digest in place of its id) is the same on both sides.
    """
    kb, kc = _digest_map(digests_base, _BY_DOCUMENT), _digest_map(digests_cur, _BY_DOCUMENT)
    if kb is None or kc is None or "questions_edited" not in out:
        return
    followed = {q for q in out["questions_edited"] if q in kb and kb[q] == kc.get(q)}
    if followed:
        out["questions_edited"] = [q for q in out["questions_edited"] if q not in followed]
        out["questions_moved"] = sorted(set(out.get("questions_moved") or []) | followed)


def left_out(changes: Mapping[str, list[str]]) -> list[str]:
    """The questions a comparison leaves out: added, removed and edited ids, sorted.

    Parameters
    ----------
    changes : mapping of str to list of str
        :func:`dataset_changes`.

    Returns
    -------
    list of str
    """
    return sorted(
        {q for how in ("added", "removed", "edited") for q in changes.get(f"questions_{how}") or []}
    )


def changed_share(changes: Mapping[str, list[str]], ids_base: set[str], ids_cur: set[str]) -> float:
    """The share of questions that changed: :func:`left_out` over every question of either side.

    Parameters
    ----------
    changes : mapping of str to list of str
        :func:`dataset_changes`.
    ids_base, ids_cur : set of str
        The question ids of each side.

    Returns
    -------
    float
        In [0, 1]; 0 when neither side has a question.
    """
    every = ids_base | ids_cur
    return len(left_out(changes)) / len(every) if every else 0.0


def first_ids(ids: list[str]) -> str:
    """The first :data:`FIRST_IDS` ids, then how many more (``"q1, q2 and 3 more"``)."""
    shown = ", ".join(ids[:FIRST_IDS])
    return shown + (f" and {len(ids) - FIRST_IDS} more" if len(ids) > FIRST_IDS else "")


def describe_changes(changes: Mapping[str, list[str]]) -> str:
    """The changes of :func:`dataset_changes` in words, naming the first few ids of each kind.

    Parameters
    ----------
    changes : mapping of str to list of str

    Returns
    -------
    str
        ``"1 question added (q41); 2 documents edited (doc-a, doc-b)"``, or ``""`` when no
        change is named. Questions whose evidence only moved are not a change and are not
        listed here.
    """
    parts = []
    for what in ("questions", "documents"):
        for how in ("added", "removed", "renamed", "edited"):
            ids = changes.get(f"{what}_{how}") or []
            if ids:
                noun = what if len(ids) > 1 else what[:-1]
                parts.append(f"{len(ids)} {noun} {how} ({first_ids(ids)})")
    return "; ".join(parts)


def resave_command(manifest: Mapping[str, Any], baseline: str) -> str:
    """The commands that re-save a baseline: its configurations run on today's documents, then saved.

    Parameters
    ----------
    manifest : mapping
        The baseline's manifest or identity (``datasets`` with their specs, ``configs`` with
        labels and specs, ``ks``, ``retriever``, ``tokenizer``, ``budgets``).
    baseline : str
        Where the baseline is (a ``.json`` file, else a results folder).

    Returns
    -------
    str
        ``chunkeval run --dataset ... --chunker LABEL=SPEC ... --out chunkeval-baseline-run
        --quiet --no-report && chunkeval baseline save chunkeval-baseline-run --to BASELINE``
        (settings left at their defaults are not repeated; a dataset given as an object, without
        a spec, appears as ``<NAME>``); for a results folder the run writes into a new folder to
        use in its place.
    """
    datasets = manifest.get("datasets") or {}
    args = ["chunkeval", "run"]
    for name, info in datasets.items():
        spec = info.get("spec") if isinstance(info, Mapping) else None
        args += ["--dataset", str(spec) if spec else f"<{name}>"]  # a Dataset object has no spec
    for config in manifest.get("configs") or []:
        label, spec = str(config.get("config")), str(config.get("spec"))
        args += ["--chunker", spec if label == spec else f"{label}={spec}"]
    ks = manifest.get("ks")
    if ks and list(ks) != [1, 3, 5, 10]:
        args += ["--k", ",".join(str(k) for k in ks)]
    for key, default in (("retriever", "tfidf"), ("tokenizer", "regex")):
        value = manifest.get(key)
        if isinstance(value, str) and value and value != default:
            args += [f"--{key}", value]
    budgets = manifest.get("budgets")
    if isinstance(budgets, list) and budgets != [256, 512, 1024]:
        args += ["--budgets", ",".join(str(b) for b in budgets) or "none"]
    if not str(baseline).endswith(".json"):
        return shlex.join([*args, "--out", f"{baseline}-today", "--quiet"])
    run_folder = "chunkeval-baseline-run"
    return (
        shlex.join([*args, "--out", run_folder, "--quiet", "--no-report"])
        + " && "
        + shlex.join(["chunkeval", "baseline", "save", run_folder, "--to", str(baseline)])
    )
