"""The metric registry (:mod:`chunkeval.metrics.registry`): a battery over every registered
metric, names and columns, where a run computes each metric, and the package's exports."""

from __future__ import annotations

import importlib
import inspect

import pytest

from chunkeval import metrics as M
from chunkeval.errors import UnknownNameError
from chunkeval.metrics.registry import METRICS, get_metric, question_metric_columns, register_metric


@pytest.mark.parametrize("name", sorted(METRICS))
def test_every_metric_is_declared_and_documented(name):
    m = METRICS[name]
    assert m.name == name
    assert isinstance(m.higher_is_better, bool)
    assert m.level in ("question", "configuration")
    assert m.per_k == name.endswith("@k")
    assert m.per_budget == name.endswith("@Btok")
    if m.per_budget:
        assert {"tokenizer", "budget"} <= set(inspect.signature(m.func).parameters)
        assert get_metric(name.replace("@Btok", "@512tok")) is m
    doc = inspect.getdoc(m.func)
    assert doc and "Returns" in doc and "Parameters" in doc
    assert "=" in doc.split("Parameters")[0] or "/" in doc.split("Parameters")[0]  # a formula
    if m.per_k:
        assert "k" in inspect.signature(m.func).parameters
        assert m.column(5) == name.replace("@k", "@5")
        assert get_metric(m.column(5)) is m


def test_registry_names_match_columns():
    cols = set(question_metric_columns([1], budgets=[64]))
    generic = {c.replace("@1", "@k").replace("@64tok", "@Btok") for c in cols}
    question_level = {n for n, m in METRICS.items() if m.level == "question"}
    assert generic == question_level
    with pytest.raises(KeyError, match="Did you mean 'recall@k'"):
        get_metric("recal@k")
    with pytest.raises(ValueError, match="already registered"):
        register_metric("mrr", higher_is_better=True)(lambda: None)
    with pytest.raises(ValueError, match="level must be"):
        register_metric("toy", higher_is_better=True, level="dataset")(lambda: None)
    assert "toy" not in METRICS


def test_unknown_metric_is_one_error_type():
    with pytest.raises(UnknownNameError) as err:
        get_metric("recall@5tokens")
    assert isinstance(err.value, KeyError) and isinstance(err.value, ValueError)
    assert err.value.kind == "metric" and "recall@k" in err.value.available
    assert get_metric("recall@5") is METRICS["recall@k"]
    with pytest.raises(UnknownNameError):
        get_metric("mrr@5")  # mrr has no cut-off


def _resolve(dotted: str):
    module, _, name = dotted.rpartition(".")
    return getattr(importlib.import_module(module), name)


@pytest.mark.parametrize("name", sorted(METRICS))
def test_every_metric_names_the_function_a_run_computes_it_with(name):
    m = METRICS[name]
    assert m.computed_by, f"{name}: computed_by is not set"
    computer = _resolve(m.computed_by)
    assert callable(computer)
    if m.level == "question":
        # the vectorised path: its columns hold this metric (proven equal in test_vectorised.py)
        assert m.computed_by == "chunkeval.metrics.vectorised.question_metrics"
        generic = {
            c.replace("@1", "@k").replace("@64tok", "@Btok") for c in question_metric_columns([1], [64])
        }
        assert name in generic
    else:
        # the stage calls the pure function itself: its module names it
        source = inspect.getsource(inspect.getmodule(computer))
        assert f"{m.func.__name__}(" in source


@pytest.mark.parametrize("name", sorted(METRICS))
def test_registered_name_is_the_function_name(name):
    m = METRICS[name]
    assert m.func.__name__ == name.replace("@k", "_at_k").replace("@Btok", "_at_budget")
    assert m.func.__module__.startswith("chunkeval.metrics.")


def test_configuration_metrics_keep_their_order():
    # gate baselines list configuration-level metrics in registry order
    config = [n for n, m in METRICS.items() if m.level == "configuration"]
    assert config == ["stored_token_overhead", "over_limit_share", "tiny_share", "mid_sentence_end_share"]


def test_package_exports_the_functions_named_like_their_metric():
    from chunkeval.metrics import containment, ranking

    for name in M.__all__:
        assert getattr(M, name) is not None, name
    # at package level each metric's function has the metric's name, on offsets
    assert M.mrr is ranking.mrr is METRICS["mrr"].func
    assert M.evidence_in_one_chunk is containment.evidence_in_one_chunk
    assert M.answerability is containment.answerability is METRICS["answerability"].func
    # the seed exercises' string forms live in chunkeval.benchmarks.metrics only
    assert not {"answerable", "chunk_sizes", "reciprocal_rank", "evidence_in_one_chunk_rate"} & set(M.__all__)
    assert METRICS["evidence_in_one_chunk"].func is containment.evidence_in_one_chunk
