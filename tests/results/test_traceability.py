"""Every stored per-question score can be traced to its chunks.

A real run with ``--budgets`` over the built-in dataset and a multi-document one is saved and
read back; then every metric column of ``per_question`` (budget metrics included) is computed
again by the metrics' pure functions from nothing but ``per_question`` (the stored ranking and
evidence), ``chunks`` (the offsets) and the documents' texts (a chunk's text is its document's
``text[start:end]``; the budget metrics need it to cut the last chunk read at the budget).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from _multidoc import write_multidoc_dataset
from chunkeval.types import Chunk, EvidenceSpan

KS = (1, 3, 5)
BUDGETS = (64, 300)
CONFIGS = [
    "fixed(chunk_size=48, chunk_overlap=16, unit='tokens')",
    "sentence(max_chars=300)",
    "paragraph(max_words=60)",
]


@pytest.fixture(scope="module")
def saved_run(tmp_path_factory):
    from chunkeval.benchmarks.runner import run
    from chunkeval.results.folder import Results

    tmp = tmp_path_factory.mktemp("trace")
    spec = write_multidoc_dataset(tmp / "multidoc")
    results = run(["builtin", spec], CONFIGS, retriever="tfidf", ks=KS, budgets=BUDGETS)
    results.save(tmp / "run")
    return Results.load(tmp / "run")


def _pure(ranked, chunks, tokens, parts, tokenizer, ks, budgets):
    """Every per-question metric of one (question, configuration), each from the pure function
    the metric registry names for it (arguments by the function's own parameter names)."""
    import inspect

    from chunkeval.metrics import METRICS

    top = ranked[: max(ks)]  # the @k metrics and mrr read the first max(ks)
    given = {
        "chunks": list(chunks.values()),  # configuration-wide: every chunk of the index
        "index": list(chunks.values()),  # map@k divides by every relevant chunk of the index
        "parts": parts,
        "chunk_tokens": [tokens[c] for c in top],
        "tokenizer": tokenizer,
    }
    out = {"n_parts": len(parts)}
    for name in METRICS.names():
        metric = METRICS.get(name)
        if metric.level != "question" or metric.computed_by is None:
            continue
        signature = inspect.signature(metric.func).parameters
        # parameters with a default (ndcg's graded=False) keep it: the columns are the defaults
        params = [p for p, v in signature.items() if v.default is inspect.Parameter.empty]
        for cut in budgets if metric.per_budget else ks if metric.per_k else [None]:
            args = {**given, "ranked": ranked if metric.per_budget else top, "k": cut, "budget": cut}
            if "chunk_tokens" in params:  # counts by position in the ranking, not chunks
                args["ranked"] = range(len(top))
            column = metric.name.replace("@k", f"@{cut}").replace("@Btok", f"@{cut}tok")
            out[column] = metric.func(*[args[p] for p in params])
    return out


@pytest.mark.slow
def test_every_stored_metric_recomputes_from_per_question_and_chunks(saved_run):
    from chunkeval.datasets import load
    from chunkeval.metrics import question_metric_columns
    from chunkeval.tokenizers import get_tokenizer

    res = saved_run
    manifest = res.manifest
    ks, budgets = tuple(manifest["ks"]), tuple(manifest["budgets"])
    assert (ks, budgets) == (KS, BUDGETS)
    tokenizer = get_tokenizer(manifest["tokenizer"])
    stored = ["n_parts", *question_metric_columns(ks, budgets)]
    assert set(stored) <= set(res.per_question.columns)
    checked = 0
    deeper = 0
    for dataset, info in manifest["datasets"].items():
        texts = {d.id: d.text for d in load(info["spec"]).documents}
        pq_d = res.per_question[res.per_question["dataset"] == dataset]
        ch_d = res.chunks[res.chunks["dataset"] == dataset]
        for config, pq in pq_d.groupby("config", sort=False):
            rows = ch_d[ch_d["config"] == config]
            chunks = {
                r.chunk_id: Chunk(
                    r.doc_id, int(r.index), int(r.start), int(r.end), texts[r.doc_id][r.start : r.end]
                )
                for r in rows.itertuples(index=False)
            }
            tokens = {chunks[c]: int(n) for c, n in zip(rows["chunk_id"], rows["n_tokens"], strict=True)}
            for r in pq.to_dict(orient="records"):
                ids = json.loads(r["retrieved_chunk_ids"])
                deeper += len(ids) > max(ks)
                ranked = [chunks[i] for i in ids]
                parts = [EvidenceSpan(d, s, e) for d, s, e in json.loads(r["evidence"])]
                expected = _pure(ranked, chunks, tokens, parts, tokenizer, ks, budgets)
                assert set(stored) <= set(expected)  # every stored metric column is recomputed
                for col in stored:
                    value = expected[col]
                    assert np.isclose(r[col], value, rtol=0, atol=1e-12), (
                        dataset,
                        config,
                        r["question_id"],
                        col,
                    )
                # stored no deeper than the largest budget read (its last chunk may be cut)
                before = sum(tokens[c] for c in ranked[:-1])
                assert len(ids) <= max(ks) or before < max(budgets)
                checked += 1
    assert checked == len(res.per_question) > 100
    assert deeper > 0  # the budgets read beyond the top max(ks) for some questions
    multi = res.per_question[res.per_question["dataset"] == "multidoc"]
    n_docs = multi["evidence"].map(lambda e: len({p[0] for p in json.loads(e)}))
    assert (n_docs > 1).any() and (n_docs == 1).any()


@pytest.mark.parametrize(
    "tokens, budget, expected",
    [
        ([5, 10, 20, 7], 15, 2),  # 5 + 10 fill the budget exactly: nothing after is read
        ([5, 10, 20, 7], 16, 3),  # the third chunk is read for one token, then cut
        ([5, 10, 0, 7], 15, 3),  # an empty chunk still fits a full budget, as budget_cut keeps it
        ([50, 1, 1, 1], 8, 1),  # the first chunk alone passes the budget
    ],
)
def test_traced_depth_hand_checked(tokens, budget, expected):
    from chunkeval.benchmarks.stages import Retrieved, traced_depth
    from chunkeval.metrics.budget import budget_cut
    from chunkeval.tokenizers import get_tokenizer

    deep = np.array([[0, 1, 2, 3], [3, -1, -1, -1]])
    retrieved = Retrieved(deep[:, :1], deep, 0.0, 0.0)
    got = traced_depth(retrieved, np.array(tokens), [budget, 1])
    assert got.tolist() == [expected, 1]  # never shallower than the @k ranking (width 1)
    assert traced_depth(Retrieved(deep[:, :1], None, 0.0, 0.0), np.array(tokens), ()).tolist() == [1, 1]
    # the depth is what budget_cut reads, on chunks of the same token counts
    tok = get_tokenizer("regex")
    chunks = [Chunk("d", i, 0, 2 * n, " ".join(["w"] * n)) for i, n in enumerate(tokens)]
    assert len(budget_cut(chunks, tok, budget)) == expected
