"""Whether two runs measured the same thing, what changed if not, and how their configurations pair.

Two runs are comparable when their ks, retriever and its parameters, and tokenizer agree (a
``"transport"`` entry of the parameters -- an endpoint's batch size, requests in flight,
timeouts -- is not compared, since it cannot change a vector, and a difference is named by its
parameter, ``embedder.params.dimensions 256 → 512``, never cut before it),
and each dataset either has the same fingerprint and question ids, or changed by at most a
stated share of its questions (:func:`conditions`). A changed dataset is explained question by
question and document by document (:func:`~chunkeval.gate.changes.dataset_changes`) from the
per-item digests a run records in ``manifest["datasets"][name]["digests"]``
(:meth:`chunkeval.datasets.Dataset.content_digests`): a question is identified by its text and
its evidence texts, so documents edited outside every quote change no question, and the runs
are compared on the questions unchanged on both sides, the others named and left out. Beyond
``stale_share`` of changed questions the baseline is *stale*. A side saved before content
identities existed falls back to the older rule: any change of the dataset is incomparable.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from chunkeval.errors import IncomparableRuns
from chunkeval.gate.changes import (
    FIRST_IDS,
    STALE_SHARE,
    changed_share,
    dataset_changes,
    describe_changes,
    first_ids,
    has_content_identity,
    left_out,
)
from chunkeval.results.folder import Results, to_jsonable

__all__ = [
    "FIRST_IDS",
    "STALE_SHARE",
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
        Environment differences (versions, commit), differing token budgets, and each changed
        dataset compared on its unchanged questions.
    unchanged : dict of str to list of str
        Dataset -> the question ids to compare, for a dataset that changed but stays
        comparable: those unchanged on both sides (the others are left out).
    documents_changed : list of str
        Datasets whose documents changed: a configuration-level metric (computed over every
        chunk) was then measured on other documents.
    resave : list of str
        Datasets on which the baseline must be saved again: it is stale (more than
        ``stale_share`` of the questions changed) or saved before content identities; each
        also has its reason in ``per_dataset``, to which
        :func:`~chunkeval.gate.comparison.compare` adds the command that re-saves it.
    """

    reasons: list[str] = field(default_factory=list)
    per_dataset: dict[str, str] = field(default_factory=dict)
    changes: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    unchanged: dict[str, list[str]] = field(default_factory=dict)
    documents_changed: list[str] = field(default_factory=list)
    resave: list[str] = field(default_factory=list)


def _canonical(value: Any) -> str:
    return json.dumps(to_jsonable(value), sort_keys=True)


def _server_changes(bm: Mapping[str, Any], cm: Mapping[str, Any]) -> list[str]:
    """The endpoints whose probe digest differs between two runs (another model, window, pooling).

    An endpoint embedder records what a fixed probe gave (``endpoint_usage[NAME]["server"]``,
    :mod:`chunkeval.endpoints.probe`); the same name and address answering with another digest
    is another model, whatever the spec says.
    """
    out: list[str] = []
    base, cur = bm.get("endpoint_usage") or {}, cm.get("endpoint_usage") or {}
    if not (isinstance(base, Mapping) and isinstance(cur, Mapping)):
        return out
    for name in sorted(set(base) & set(cur)):
        sb, sc = (
            (side[name] or {}).get("server") or {} if isinstance(side[name], Mapping) else {}
            for side in (base, cur)
        )
        db, dc = sb.get("probe_sha256"), sc.get("probe_sha256")
        if db and dc and db != dc:
            out.append(
                f"the endpoint {name} answered the probe differently: digest {db} → {dc} (the same "
                "model name and address gave other vectors: another model, window or pooling)"
            )
    return out


def _compared(value: Any) -> Any:
    """``value`` without its ``"transport"`` entries (at any depth): what ``compare`` compares."""
    if isinstance(value, Mapping):
        return {k: _compared(v) for k, v in value.items() if k != "transport"}
    if isinstance(value, list | tuple):
        return [_compared(v) for v in value]
    return value


def _differences(base: Any, cur: Any, where: str = "", most: int = 3) -> str:
    """The leaves that differ between two JSON-like values, named by path (at most ``most``).

    ``"embedder.params.dimensions 256 → 512"``; ``""`` when the values are not both mappings.
    """
    if not (isinstance(base, Mapping) and isinstance(cur, Mapping)):
        return ""
    found: list[str] = []

    def walk(b: Any, c: Any, path: str) -> None:
        if isinstance(b, Mapping) and isinstance(c, Mapping):
            for k in dict.fromkeys([*b, *c]):
                walk(b.get(k), c.get(k), f"{path}.{k}" if path else str(k))
        elif _canonical(b) != _canonical(c):
            found.append(f"{path} {_brief(b)} → {_brief(c)}")

    walk(base, cur, where)
    more = f" and {len(found) - most} more" if len(found) > most else ""
    return "; ".join(found[:most]) + more


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
        that differs (a missing or empty value equals another missing or empty one; the
        ``"transport"`` entries are not compared); each makes the runs incomparable.
    """
    return [
        (key, what)
        for key, what in _SETTINGS
        if _canonical(_compared(bm.get(key) or None)) != _canonical(_compared(cm.get(key) or None))
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
        named = _differences(_compared(bm.get(key) or None), _compared(planned.get(key) or None))
        change = (
            f"its {key} would differ ({named}, baseline → this run)"
            if named
            else f"its {key} would be {planned.get(key)!r}, the baseline's is {bm.get(key)!r}"
        )
        raise IncomparableRuns(
            f"this run cannot be compared with {name}: {change}; use the baseline's settings or save a "
            "new baseline"
        )


def conditions(base: Results, cur: Results, stale_share: float = STALE_SHARE) -> Conditions:
    """Compare the measuring conditions of two runs.

    Parameters
    ----------
    base, cur : Results
        The baseline and the current run.
    stale_share : float, default :data:`~chunkeval.gate.changes.STALE_SHARE`
        In [0, 1]: the largest share of a dataset's questions that may have changed (added,
        removed or edited) for the runs to be compared on the rest.

    Returns
    -------
    Conditions
    """
    bm, cm = base.manifest or {}, cur.manifest or {}
    found = Conditions()
    for key, what in setting_differences(bm, cm):
        b, c = _compared(bm.get(key) or None), _compared(cm.get(key) or None)
        named = _differences(b, c)
        found.reasons.append(
            f"the {what}: {named}" if named else f"the {what}: baseline {_brief(b)}, current {_brief(c)}"
        )
    found.reasons += _server_changes(bm, cm)
    bb, cb = bm.get("budgets") or [], cm.get("budgets") or []
    if bb != cb:  # extra metrics, not other conditions: the metrics both sides have compare as usual
        found.notes.append(
            f"token budgets: baseline {bb or 'none'}, current {cb or 'none'}; a budget metric is "
            "compared only where both runs measured it"
        )
    for name in datasets_of(base):
        _dataset_condition(base, cur, name, found, stale_share)
    found.notes += _environment_notes(bm, cm)
    return found


def _dataset_condition(base: Results, cur: Results, name: str, found: Conditions, stale_share: float) -> None:
    """Record why dataset ``name`` of the baseline cannot be compared, or on which questions it can."""
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
    db, dc = info_b.get("digests"), info_c.get("digests")
    changes = dataset_changes(db, dc, qb, qc)
    found.changes[name] = changes
    what = describe_changes(changes)
    if not (has_content_identity(db) and has_content_identity(dc)):
        older_baseline = not has_content_identity(db)
        side, fix = (
            ("the baseline", "save the baseline again")
            if older_baseline
            else ("the current run", "run it again")  # re-saving the baseline would not help
        )
        found.per_dataset[name] = (
            f"dataset {name} changed: {what or 'the documents or questions differ'} (fingerprint "
            f"{str(fb)[:12]} in the baseline, {str(fc)[:12]} now); {side} records no content "
            "identity of its questions (saved by an older chunkeval), so any edit of the dataset is "
            f"incomparable: {fix} with this chunkeval version"
        )
        if older_baseline:
            found.resave.append(name)
        return
    out = left_out(changes)
    kept = sorted((qb & qc) - set(out))
    share = changed_share(changes, qb, qc)
    if any(changes.get(f"documents_{how}") for how in ("added", "removed", "renamed", "edited")):
        found.documents_changed.append(name)
    if share > stale_share + 1e-12 or not kept:
        found.resave.append(name)
        found.per_dataset[name] = (
            f"the baseline is stale for dataset {name}: {len(out)} of {len(qb | qc)} questions "
            f"changed ({share:.0%}, more than the {stale_share:.0%} --stale-share allows): {what}"
        )
        return
    found.unchanged[name] = kept
    moved = changes.get("questions_moved") or []
    found.notes.append(
        f"dataset {name} changed since the baseline: {what or 'no question or document named'}; "
        f"compared on the {len(kept)} unchanged question(s)"
        + (f", {len(out)} left out" if out else "")
        + (f"; evidence moved but unchanged in {len(moved)} ({first_ids(moved)})" if moved else "")
    )


def _named(ids: list[str]) -> str:
    return f": {first_ids(ids)}" if ids else ""


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
