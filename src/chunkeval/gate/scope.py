"""What a comparison leaves out of its test, and why: one rule per reason, each with its note.

* *Questions that changed* since the baseline (:func:`restrict`): a changed dataset is
  compared on the questions unchanged on both sides (:mod:`chunkeval.gate.changes`).
* *Metrics the data fix* (:func:`fixed_by_the_data`, :func:`unchecked_by_construction`): a
  check on ``answerable@5`` where no question has all its evidence in one document could
  never fail.
* *Configuration-level metrics on other documents* (:func:`unchecked_on_other_documents`):
  ``stored_token_overhead`` and the other metrics computed over every chunk describe the whole
  corpus, so when the documents changed and the baseline's configurations were not re-run on
  today's documents, they compare two corpora, not two chunkers.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

import pandas as pd

from chunkeval.results.folder import Results

__all__ = ["fixed_by_the_data", "restrict", "unchecked_by_construction", "unchecked_on_other_documents"]


def restrict(results: Results, keep: Mapping[str, Collection[str]]) -> Results:
    """``results`` with the per-question rows of some datasets cut to the given question ids.

    Parameters
    ----------
    results : Results
    keep : mapping of str to collection of str
        Dataset -> the question ids to keep; datasets not named keep every row.

    Returns
    -------
    Results
        A new :class:`Results` sharing the summary, chunks and manifest (the summary's means
        are not recomputed: the comparison reads question-level values from ``per_question``).
    """
    if not keep:
        return results
    pq = results.per_question
    dataset, qid = pq["dataset"].astype(str), pq["question_id"].astype(str)
    mask = pd.Series(True, index=pq.index)
    for name, ids in keep.items():
        mask &= (dataset != name) | qid.isin(list(ids))
    return Results(results.summary, pq[mask].reset_index(drop=True), results.chunks, results.manifest)


def fixed_by_the_data(base: Results, cur: Results, dataset: str) -> dict[str, str]:
    """Metrics one dataset fixes whatever the chunking, on either side, with the reason.

    A check on such a metric (``answerable@5`` where no question has all its evidence in one
    document) can never fail, so it would only pretend to guard
    (:func:`chunkeval.policy.by_construction`).

    Parameters
    ----------
    base, cur : Results
    dataset : str

    Returns
    -------
    dict of str to str
        Metric -> the reason (one sentence).
    """
    from chunkeval.policy import by_construction

    fixed: dict[str, str] = {}
    for side in (base, cur):
        fixed.update(by_construction(side.summary[side.summary["dataset"].astype(str) == dataset]))
    return fixed


def _uncheck(rows: pd.DataFrame, dataset: str, metrics: Collection[str]) -> list[str]:
    """Uncheck the checked rows of ``metrics`` on ``dataset``; the metrics unchecked, in row order."""
    if not len(rows):
        return []
    hit = rows["checked"] & (rows["dataset"].astype(str) == dataset) & rows["metric"].isin(list(metrics))
    if not hit.any():
        return []
    rows.loc[hit, "checked"] = False
    rows.loc[hit, "check"] = ""
    return list(dict.fromkeys(rows.loc[hit, "metric"]))


def unchecked_by_construction(rows: pd.DataFrame, fixed: Mapping[str, Mapping[str, str]]) -> list[str]:
    """Uncheck the rows of metrics the data fix (:func:`fixed_by_the_data`), in place.

    Parameters
    ----------
    rows : pandas.DataFrame
        A comparison's rows (``dataset``, ``metric``, ``checked``, ``check``).
    fixed : mapping
        Dataset -> :func:`fixed_by_the_data`.

    Returns
    -------
    list of str
        One note per dataset with rows unchecked.
    """
    notes = []
    for dataset, reasons in fixed.items():
        metrics = _uncheck(rows, dataset, list(reasons))
        if metrics:
            notes.append(f"dataset {dataset}: {', '.join(metrics)} not checked, n/a: {reasons[metrics[0]]}")
    return notes


def unchecked_on_other_documents(
    rows: pd.DataFrame, datasets: Collection[str], config_metrics: Collection[str]
) -> list[str]:
    """Uncheck configuration-level rows of datasets whose documents changed, in place.

    Parameters
    ----------
    rows : pandas.DataFrame
        A comparison's rows.
    datasets : collection of str
        The datasets whose documents differ between the two sides.
    config_metrics : collection of str
        The configuration-level metrics compared (``stored_token_overhead`` ...).

    Returns
    -------
    list of str
        One note per dataset with rows unchecked.
    """
    notes = []
    for dataset in datasets:
        metrics = _uncheck(rows, dataset, config_metrics)
        if metrics:
            notes.append(
                f"dataset {dataset}: {', '.join(metrics)} not checked: computed over every chunk, so "
                "measured on other documents than the baseline's"
            )
    return notes
