"""The retriever registry and spec strings (:mod:`chunkeval.retrieval.registry`), and the class
path a run records for each retriever."""

from __future__ import annotations

import pytest
from _retrieval_cases import CORPUS, CountEmbedder

import chunkeval.retrieval as R
from chunkeval.errors import UnknownNameError
from chunkeval.retrieval.base import Retriever
from chunkeval.retrieval.dense import DenseRetriever
from chunkeval.retrieval.hybrid import HybridRetriever
from chunkeval.retrieval.lexical import BM25Retriever, TfidfRetriever
from chunkeval.retrieval.registry import RETRIEVERS, available_retrievers, get_retriever


def test_registry_and_errors():
    assert available_retrievers() == ["bm25", "dense", "hybrid", "lsa", "tfidf"]
    assert isinstance(get_retriever("TFIDF"), TfidfRetriever)
    assert get_retriever("bm25", k1=1.2).get_params()["k1"] == 1.2
    r = TfidfRetriever()
    assert get_retriever(r) is r
    assert isinstance(get_retriever("dense", embedder=CountEmbedder()), DenseRetriever)
    with pytest.raises(ValueError, match="Did you mean 'tfidf'"):
        get_retriever("tfidff")
    assert issubclass(BM25Retriever, Retriever)


def test_unknown_retriever_is_one_error_type():
    with pytest.raises(UnknownNameError) as err:
        get_retriever("lsaa(k=1)")
    assert isinstance(err.value, KeyError) and isinstance(err.value, ValueError)
    assert err.value.kind == "retriever" and err.value.name == "lsaa"
    assert "unknown retriever 'lsaa'" in str(err.value) and "Did you mean 'lsa'" in str(err.value)


@pytest.mark.parametrize("name", available_retrievers())
def test_registered_class_knows_its_name(name):
    assert RETRIEVERS.get(name).name == name


@pytest.mark.parametrize("name", available_retrievers())
def test_manifest_records_the_package_path(name):
    # a run's provenance names the class as chunkeval.retrieval exports it, whichever module
    # defines it, so that moving a class does not change what a baseline recorded
    cls = RETRIEVERS.get(name)
    assert getattr(R, cls.__name__) is cls
    spec = {"dense": "dense(embedder='hashing')", "hybrid": "hybrid(tfidf, lsa)"}.get(name, name)
    assert get_retriever(spec).manifest_params()["class"] == f"chunkeval.retrieval.{cls.__name__}"


def test_package_exports():
    for name in R.__all__:
        assert getattr(R, name) is not None, name
    assert R.HybridRetriever is HybridRetriever


def test_retriever_specs():
    assert get_retriever("tfidf(analyzer='sklearn', sublinear_tf=True)").get_params()["analyzer"] == "sklearn"
    h = get_retriever("hybrid(bm25(k1=1.2), lsa, k=30)")
    assert isinstance(h, HybridRetriever) and (h.first, h.second, h.k) == ("bm25(k1=1.2)", "lsa", 30)
    assert get_retriever("bm25(k1=1.2)", k1=2.0).k1 == 2.0  # keyword parameters override the spec
    with pytest.raises(ValueError, match=r"unknown parameter.*k3.*takes k1, b"):
        get_retriever("bm25(k3=1)")
    with pytest.raises(ValueError, match="positional arguments"):
        get_retriever("tfidf(bm25)")
    with pytest.raises(ValueError, match="cannot parse retriever spec"):
        get_retriever("tfidf(")
    with pytest.raises(ValueError, match="hybrid needs two retrievers"):
        get_retriever("hybrid(tfidf)").fit(CORPUS)
