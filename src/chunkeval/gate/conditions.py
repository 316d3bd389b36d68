"""Whether two runs measured the same thing, what changed if not, and how their configurations pair.

Two runs are comparable when their datasets (fingerprints and question ids), ks, retriever
and its parameters, and tokenizer agree (:func:`conditions`). A changed dataset is explained
question by question and document by document (:func:`dataset_changes`) from the per-item
digests a run records in ``manifest["datasets"][name]["digests"]``
(:meth:`chunkeval.datasets.Dataset.content_digests`); a baseline saved before those digests
existed is explained by its question ids alone.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from chunkeval.errors import IncomparableRuns
from chunkeval.results.folder import Results, to_jsonable

__all__ = [
    "Conditions",
    "conditions",
    "config_pairs",
    "dataset_changes",
    "datasets_of",
    "describe_changes",
    "question_ids",
    "refuse_incomparable",
    "setting_differences",
    "spec_change",
    "specs_of",
]

_ENVIRONMENT_KEYS = ("chunkeval_version", "python", "platform", "git_commit")
_SETTINGS = (
    ("ks", "retrieval cut-offs ks differ"),
    ("retriever", "retriever differs"),
    ("retriever_params", "retriever parameters differ"),
    ("tokenizer", "tokenizer differs"),
)
#: Ids named per kind of change before the rest is counted ("q1, q2, ... and 7 more").
FIRST_IDS = 5


@dataclass
class Conditions:
    """What :func:`conditions` found.

    Attributes
    ----------
    reasons : list of str
        Settings that differ for the whole run (each makes the runs incomparable).
    per_dataset : dict of str to str
        Dataset -> why it is incomparable (a changed or missing dataset).
    changes : dict of str to dict
        Dataset -> :func:`dataset_changes` of a changed dataset (lists of ids).
    notes : list of str
        Environment differences (versions, commit) and differing token budgets.
    """

    reasons: list[str] = field(default_factory=list)
    per_dataset: dict[str, str] = field(default_factory=dict)
    changes: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def _canonical(value: Any) -> str:
    return json.dumps(to_jsonable(value), sort_keys=True)


def _brief(value: Any) -> str:
    text = _canonical(value)
    return text if len(text) <= 80 else text[:77] + "..."


def datasets_of(results: Results) -> list[str]:
    """The datasets of a run, in summary order."""
    return list(dict.fromkeys(results.summary["dataset"].astype(str)))


def question_ids(results: Results, dataset: str) -> set[str]:
    """The question ids of one dataset of a run (from ``per_question``)."""
    pq = results.per_question
    return set(pq.loc[pq["dataset"].astype(str) == dataset, "question_id"].astype(str))


def setting_differences(bm: Mapping[str, Any], cm: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The run-wide measuring conditions two manifests disagree on: the one rule, before and after.

    Parameters
    ----------
    bm, cm : mapping
        The baseline's manifest, and the current run's (or the keys a run will record,
        :meth:`chunkeval.benchmarks.runner.ResolvedRun.conditions`, before it runs).

    Returns
    -------
    list of (str, str)
        ``(key, what differs)`` for each of ks, retriever, retriever parameters and tokenizer
        that differs (a missing or empty value equals another missing or empty one); each
        makes the runs incomparable.
    """
    return [
        (key, what)
        for key, what in _SETTINGS
        if _canonical(bm.get(key) or None) != _canonical(cm.get(key) or None)
    ]


def refuse_incomparable(base: Results, planned: Mapping[str, Any], name: str) -> None:
    """Refuse, before a run, a baseline it could not be compared with (:func:`setting_differences`).

    Parameters
    ----------
    base : Results
        The baseline (a results folder or baseline file, loaded).
    planned : mapping
        The manifest keys the run will record.
    name : str
        How to name the baseline in the message (its path).

    Raises
    ------
    IncomparableRuns
        Naming the first condition that differs, both values and the fix.
    """
    bm = base.manifest or {}
    for key, _ in setting_differences(bm, planned)[:1]:
        raise IncomparableRuns(
            f"this run cannot be compared with {name}: its {key} would be {planned.get(key)!r}, "
            f"the baseline's is {bm.get(key)!r}; use the baseline's settings or save a new baseline"
        )


def conditions(base: Results, cur: Results) -> Conditions:
    """Compare the measuring conditions of two runs.

    Parameters
    ----------
    base, cur : Results
        The baseline and the current run.

    Returns
    -------
    Conditions
    """
    bm, cm = base.manifest or {}, cur.manifest or {}
    found = Conditions()
    for key, what in setting_differences(bm, cm):
        found.reasons.append(f"the {what}: baseline {_brief(bm.get(key))}, current {_brief(cm.get(key))}")
    bb, cb = bm.get("budgets") or [], cm.get("budgets") or []
    if bb != cb:  # extra metrics, not other conditions: the metrics both sides have compare as usual
        found.notes.append(
            f"token budgets: baseline {bb or 'none'}, current {cb or 'none'}; a budget metric is "
            "compared only where both runs measured it"
        )
    for name in datasets_of(base):
        _dataset_condition(base, cur, name, found)
    found.notes += _environment_notes(bm, cm)
    return found


def _dataset_condition(base: Results, cur: Results, name: str, found: Conditions) -> None:
    """Record why dataset ``name`` of the baseline cannot be compared, if it cannot."""
    if name not in datasets_of(cur):
        found.per_dataset[name] = (
            f"dataset {name} of the baseline is not in the current run (it has {', '.join(datasets_of(cur))})"
        )
        return
    info_b = ((base.manifest or {}).get("datasets") or {}).get(name) or {}
    info_c = ((cur.manifest or {}).get("datasets") or {}).get(name) or {}
    fb, fc = info_b.get("fingerprint"), info_c.get("fingerprint")
    qb, qc = question_ids(base, name), question_ids(cur, name)
    if fb == fc and qb == qc:
        return
    if fb == fc:  # the same dataset, but a side's tables lack questions (a cut baseline file)
        only_b, only_c = sorted(qb - qc), sorted(qc - qb)
        found.changes[name] = {"questions_only_in_baseline": only_b, "questions_only_in_current": only_c}
        found.per_dataset[name] = (
            f"dataset {name}: the question sets differ ({len(only_b)} only in the baseline"
            f"{_named(only_b)}, {len(only_c)} only in the current run{_named(only_c)})"
        )
        return
    changes = dataset_changes(info_b.get("digests"), info_c.get("digests"), qb, qc)
    found.changes[name] = changes
    what = describe_changes(changes)
    if "questions_edited" not in changes:
        what = (what + "; " if what else "") + (
            "the documents or questions differ, and which were edited cannot be named: a side "
            "records no per-question digests (save the baseline again with this chunkeval version)"
        )
    found.per_dataset[name] = (
        f"dataset {name} changed: {what or 'the documents or questions differ'} "
        f"(fingerprint {str(fb)[:12]} in the baseline, {str(fc)[:12]} now)"
    )


def _named(ids: list[str]) -> str:
    return f": {_first(ids)}" if ids else ""


def _environment_notes(bm: Mapping[str, Any], cm: Mapping[str, Any]) -> list[str]:
    notes = [
        f"{key.replace('_', ' ')}: {bm.get(key)} → {cm.get(key)}"
        for key in _ENVIRONMENT_KEYS
        if bm.get(key) != cm.get(key) and (bm.get(key) or cm.get(key))
    ]
    bdeps, cdeps = bm.get("dependencies") or {}, cm.get("dependencies") or {}
    notes += [
        f"{dep}: {bdeps.get(dep)} → {cdeps.get(dep)}"
        for dep in sorted(set(bdeps) | set(cdeps))
        if bdeps.get(dep) != cdeps.get(dep)
    ]
    return notes


# --------------------------------------------------------------------------- what changed
def _digest_map(digests: Any, kind: str) -> dict[str, str] | None:
    part = digests.get(kind) if isinstance(digests, Mapping) else None
    if not isinstance(part, Mapping):
        return None
    return {str(k): str(v) for k, v in part.items()}


def _diff(old: Mapping[str, str], new: Mapping[str, str]) -> tuple[list[str], list[str], list[str]]:
    """(added, removed, edited) ids, each sorted."""
    added = sorted(set(new) - set(old))
    removed = sorted(set(old) - set(new))
    edited = sorted(k for k in set(old) & set(new) if old[k] != new[k])
    return added, removed, edited


def dataset_changes(
    digests_base: Any, digests_cur: Any, ids_base: set[str], ids_cur: set[str]
) -> dict[str, list[str]]:
    """Which questions and documents of a dataset were added, removed or edited.

    Parameters
    ----------
    digests_base, digests_cur : mapping or None
        ``{"questions": {id: digest}, "documents": {id: digest}}`` of each side's manifest
        (:meth:`chunkeval.datasets.Dataset.content_digests`); None when a side has none.
    ids_base, ids_cur : set of str
        The question ids of each side's ``per_question`` table, used when a side records
        no question digests.

    Returns
    -------
    dict of str to list of str
        ``questions_added``, ``questions_removed``, ``questions_edited``,
        ``documents_added``, ``documents_removed``, ``documents_edited`` (sorted ids; a
        key is left out when that side of the change cannot be known: edits and
        documents without digests on both sides).
    """
    out: dict[str, list[str]] = {}
    qb, qc = _digest_map(digests_base, "questions"), _digest_map(digests_cur, "questions")
    if qb is not None and qc is not None:
        added, removed, edited = _diff(qb, qc)
        out.update(questions_added=added, questions_removed=removed, questions_edited=edited)
    else:
        out.update(questions_added=sorted(ids_cur - ids_base), questions_removed=sorted(ids_base - ids_cur))
    db, dc = _digest_map(digests_base, "documents"), _digest_map(digests_cur, "documents")
    if db is not None and dc is not None:
        added, removed, edited = _diff(db, dc)
        out.update(documents_added=added, documents_removed=removed, documents_edited=edited)
    return out


def _first(ids: list[str]) -> str:
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
        change is named.
    """
    parts = []
    for what in ("questions", "documents"):
        for how in ("added", "removed", "edited"):
            ids = changes.get(f"{what}_{how}") or []
            if ids:
                noun = what if len(ids) > 1 else what[:-1]
                parts.append(f"{len(ids)} {noun} {how} ({_first(ids)})")
    return "; ".join(parts)


# --------------------------------------------------------------------------- matching
def specs_of(results: Results, dataset: str) -> dict[str, str]:
    """Configuration label -> spec of one dataset of a run."""
    s = results.summary[results.summary["dataset"].astype(str) == dataset]
    spec = s["spec"] if "spec" in s.columns else s["config"]
    return dict(zip(s["config"].astype(str), spec.astype(str), strict=True))


def spec_change(old: str, new: str) -> str:
    """Describe how a chunker spec changed, e.g. ``"max_chars 1000 → 200"``.

    Parameters
    ----------
    old, new : str
        Chunker spec strings.

    Returns
    -------
    str
        ``""`` when equal; the changed parameters when the chunker is the same; else
        ``"OLD → NEW"``.
    """
    from chunkeval.specs import parse_spec

    if old == new:
        return ""
    try:
        (fo, po), (fn, pn) = parse_spec(old), parse_spec(new)
    except ValueError:
        return f"{old} → {new}"
    if fo != fn:
        return f"{old} → {new}"
    keys = [k for k in dict.fromkeys([*po, *pn]) if po.get(k, "default") != pn.get(k, "default")]
    return (
        ", ".join(f"{k} {po.get(k, 'default')!r} → {pn.get(k, 'default')!r}".replace("'", "") for k in keys)
        or f"{old} → {new}"
    )


def config_pairs(
    base: Results, cur: Results, dataset: str, notes: list[str]
) -> list[tuple[str | None, str | None]]:
    """(baseline label, current label) pairs of one dataset; None marks missing/new.

    Labels pair with equal labels; with exactly one configuration on each side they pair
    whatever their labels, and a note in ``notes`` says so.
    """
    bs, cs = list(specs_of(base, dataset)), list(specs_of(cur, dataset))
    if len(bs) == 1 and len(cs) == 1:
        if bs[0] != cs[0]:
            notes.append(
                f"dataset {dataset}: one configuration on each side, paired although "
                f"their labels differ ({bs[0]} → {cs[0]})"
            )
        return [(bs[0], cs[0])]
    pairs: list[tuple[str | None, str | None]] = [(b, b if b in cs else None) for b in bs]
    pairs += [(None, c) for c in cs if c not in bs]
    return pairs
