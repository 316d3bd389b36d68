"""Sentence embedders for the ``semantic`` chunker (and the dense retriever).

The neural encoder of BERT-family models (``minilm``, ``bert:PATH``) lives in
:mod:`chunkeval.encoders`; this module names it in the spec grammar.

An embedder has ``fit(texts) -> self`` (learn from a corpus; a no-op when
nothing is learned), ``transform(texts) -> (n, d)`` vectors (a numpy array,
or a scipy sparse matrix for the hashing embedder) and ``embed(texts)``,
which fits on ``texts`` and transforms them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from chunkeval._params import Params
from chunkeval.errors import MissingDependency, UsageError
from chunkeval.registry import Registry

_WORD_PATTERN = r"(?u)\b\w+\b"


def cosine_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cosine similarity of two ``(n, d)`` arrays; 0.0 where either row is zero.

    Returns
    -------
    ndarray of shape (n,)
        Values in [-1, 1], never NaN.
    """
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    dots = np.einsum("ij,ij->i", a, b)
    norms = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
    out = np.zeros(len(dots))
    np.divide(dots, norms, out=out, where=norms > 0)
    return np.clip(out, -1.0, 1.0)


class Embedder(Params):
    """Base embedder: ``embed(texts)`` is ``fit(texts).transform(texts)``."""

    def fit(self, texts: Sequence[str]) -> Embedder:
        """Learn from ``texts`` (a list of n strings); a no-op by default.

        Returns
        -------
        Embedder
            ``self``.
        """
        return self

    def transform(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors of ``texts``.

        Returns
        -------
        ndarray or scipy sparse matrix of shape (len(texts), d)
        """
        raise NotImplementedError

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Fit on ``texts`` and return their vectors.

        Returns
        -------
        ndarray or scipy sparse matrix of shape (len(texts), d)
        """
        return self.fit(texts).transform(texts)


class HashingEmbedder(Embedder):
    """Deterministic bag-of-words vectors by feature hashing; no model, no fitting.

    Lower-cased word unigrams (and bigrams when ``ngram_max=2``) hashed into
    ``n_features`` buckets with scikit-learn's ``HashingVectorizer``
    (MurmurHash3, independent of ``PYTHONHASHSEED``), L2-normalised. The
    signal is lexical overlap, the "hashing trick" of Weinberger et al.,
    "Feature Hashing for Large Scale Multitask Learning", ICML 2009.

    Parameters
    ----------
    n_features : int, default 1024
    ngram_max : int, default 1
    """

    def __init__(self, n_features=1024, ngram_max=1):
        self.n_features = n_features
        self.ngram_max = ngram_max

    def transform(self, texts: Sequence[str]):
        """Sparse L2-normalised vectors, a scipy CSR matrix of shape ``(len(texts), n_features)``."""
        from sklearn.feature_extraction.text import HashingVectorizer

        vectorizer = HashingVectorizer(
            n_features=self.n_features,
            ngram_range=(1, self.ngram_max),
            alternate_sign=False,
            token_pattern=_WORD_PATTERN,
        )
        return vectorizer.transform(list(texts))


class LSAEmbedder(Embedder):
    """Latent semantic analysis: TF-IDF then truncated SVD, fitted on the given texts.

    Deerwester et al., "Indexing by Latent Semantic Analysis", JASIS 1990;
    scikit-learn ``TfidfVectorizer`` + ``TruncatedSVD`` (fixed
    ``random_state``, so repeated runs agree). With fewer texts or terms
    than ``n_components + 1`` the TF-IDF vectors are used as they are.

    Parameters
    ----------
    n_components : int, default 64
    random_state : int, default 0
    """

    def __init__(self, n_components=64, random_state=0):
        self.n_components = n_components
        self.random_state = random_state

    def fit(self, texts: Sequence[str]) -> LSAEmbedder:
        from sklearn.decomposition import TruncatedSVD
        from sklearn.feature_extraction.text import TfidfVectorizer

        texts = list(texts)
        self.vectorizer_ = TfidfVectorizer(token_pattern=_WORD_PATTERN, sublinear_tf=True)
        try:
            matrix = self.vectorizer_.fit_transform(texts)
        except ValueError:  # no words at all in the corpus
            self.vectorizer_ = None
            return self
        k = min(self.n_components, matrix.shape[0] - 1, matrix.shape[1] - 1)
        self.svd_ = (
            TruncatedSVD(n_components=k, random_state=self.random_state).fit(matrix) if k >= 2 else None
        )
        return self

    def transform(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        if getattr(self, "vectorizer_", None) is None:
            return np.zeros((len(texts), 1))
        matrix = self.vectorizer_.transform(texts)
        return self.svd_.transform(matrix) if self.svd_ is not None else matrix.toarray()


class SentenceTransformerEmbedder(Embedder):
    """Embeddings from a local sentence-transformers model (extra ``embeddings``).

    Parameters
    ----------
    model : str
        A model name already in the local cache or a path to a saved model;
        nothing is downloaded (``HF_HUB_OFFLINE`` is honoured by the library).

    Raises
    ------
    ImportError
        When ``sentence-transformers`` is not installed.
    """

    def __init__(self, model="all-MiniLM-L6-v2"):
        self.model = model

    def transform(self, texts: Sequence[str]) -> np.ndarray:
        if getattr(self, "model_", None) is None:
            try:
                from sentence_transformers import SentenceTransformer
            except ImportError:
                raise MissingDependency(
                    "the sentence-transformers embedder needs the package: "
                    "pip install 'chunkeval[embeddings]'"
                ) from None
            self.model_ = SentenceTransformer(self.model, local_files_only=True)
        return np.asarray(self.model_.encode(list(texts), normalize_embeddings=True, show_progress_bar=False))

    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("model_", None)  # reloaded lazily in a worker process
        return state


def _no_argument(cls: type[Embedder]) -> Callable[..., Embedder]:
    def make(argument: str | None, **params: Any) -> Embedder:
        if argument is not None:
            raise UsageError(f"embedder {cls.__name__} takes no argument after ':', got {argument!r}")
        return cls(**params)

    return make


def _sentence_transformers(argument: str | None, **params: Any) -> Embedder:
    return (
        SentenceTransformerEmbedder(argument, **params) if argument else SentenceTransformerEmbedder(**params)
    )


def _minilm(argument: str | None, **params: Any) -> Any:
    """all-MiniLM-L6-v2 from its installed weights package (see :mod:`chunkeval.encoders`)."""
    from chunkeval.encoders.embedder import BertEmbedder

    if argument is not None:
        raise UsageError(f"embedder 'minilm' takes no argument after ':', got {argument!r}; use bert:PATH")
    return BertEmbedder("minilm", **params)


def _bert(argument: str | None, **params: Any) -> Any:
    """A BERT-family model folder, ``bert:PATH``, run by chunkeval's numpy encoder."""
    from chunkeval.encoders.embedder import BertEmbedder

    if not argument and "model" not in params:
        raise UsageError(
            "embedder 'bert' needs a model folder: bert:PATH (config.json, tokenizer.json, model.safetensors)"
        )
    return BertEmbedder(argument, **params) if argument else BertEmbedder(**params)


def _python_embedder(target: str, params: dict[str, Any]) -> Any:
    """``python:package.module:factory(...)``: the factory called with the parameters."""
    import importlib

    module_name, _, attr = target.rpartition(":")
    if not module_name or not attr:
        raise UsageError(f"embedder 'python:{target}': expected python:package.module:factory(arg=...)")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise UsageError(f"embedder 'python:{target}': cannot import {module_name!r} ({error})") from None
    factory = getattr(module, attr, None)
    if not callable(factory):
        raise UsageError(f"embedder 'python:{target}': module {module_name!r} has no callable {attr!r}")
    return factory(**params)


def _split_params(spec: str) -> tuple[str, dict[str, Any]]:
    """``"head(k=v, ...)"`` -> ``("head", {k: v})``; a head may contain ':' (a path, a module)."""
    from chunkeval.specs import parse_spec

    text = spec.strip()
    if not text.endswith(")") or "(" not in text:
        return text, {}
    head, _, args = text.partition("(")
    return head, parse_spec(f"f({args}")[1]


def _plugin_embedder(name: str, obj: Any, target: str) -> Callable[[str | None], Any]:
    """A ``chunkeval.embedders`` entry point names a callable returning an embedder: called
    with no argument for ``NAME``, with ``ARG`` for ``NAME:ARG``."""
    if not callable(obj):
        raise TypeError(f"expected a callable returning an embedder, got {obj!r}")

    def make(argument: str | None) -> Any:
        made = obj() if argument is None else obj(argument)
        if not hasattr(made, "embed"):
            raise UsageError(f"embedder plug-in {name!r} ({target}) returned {made!r}, which has no embed()")
        return made

    return make


#: Embedder families by spec head (``hashing``, ``lsa``, ``sentence-transformers[:MODEL]``, and
#: plug-ins of the ``chunkeval.embedders`` entry point group).
EMBEDDERS: Registry[Callable[..., Any]] = Registry("embedder", "chunkeval.embedders", _plugin_embedder)
EMBEDDERS.add("hashing", _no_argument(HashingEmbedder))
EMBEDDERS.add("lsa", _no_argument(LSAEmbedder))
EMBEDDERS.add("sentence-transformers", _sentence_transformers)
EMBEDDERS.add("minilm", _minilm)
EMBEDDERS.add("bert", _bert)


def get_embedder(spec) -> Embedder:
    """Embedder from a spec or an object.

    Parameters
    ----------
    spec : str or object
        ``NAME[:ARG][(key=value, ...)]``: ``"hashing"``, ``"lsa"``, ``"minilm"`` (all-MiniLM-L6-v2
        from its installed weights package), ``"bert:PATH"`` (a BERT-family model folder),
        ``"sentence-transformers[:MODEL]"``, an installed plug-in, or
        ``"python:package.module:factory(key=value)"``; keyword parameters go to the
        embedder (``"minilm(query_prefix='query: ', batch_size=16)"``). An object with
        ``embed`` is returned unchanged.

    Returns
    -------
    Embedder or object
        An object with ``embed(list[str])``.

    Raises
    ------
    UnknownNameError
        For an unknown name (a :class:`ValueError`), suggesting the closest ones.
    UsageError
        For an argument the embedder does not take, or an object without ``embed``.
    """
    if not isinstance(spec, str):
        if not hasattr(spec, "embed"):
            raise UsageError(f"embedder must be a name or have an embed(texts) method, got {spec!r}")
        return spec
    head, params = _split_params(spec)
    if head.startswith("python:"):
        made = _python_embedder(head[len("python:") :], params)
        if not hasattr(made, "embed"):
            raise UsageError(f"embedder {spec!r} returned {made!r}, which has no embed(texts)")
        return made
    name, colon, argument = head.partition(":")
    factory = EMBEDDERS.get(name)
    try:
        return factory(argument if colon else None, **params)
    except TypeError as error:
        raise UsageError(f"embedder {spec!r}: {error}") from None


def check_finite(vectors: Any, texts: Sequence[str], embedder: Any) -> None:
    """Raise when an embedder returned a NaN or infinite value, naming the text and the embedder.

    A NaN similarity compares False with every threshold and an infinite one overflows a
    norm, so chunk boundaries or rankings would be decided by accident; the semantic chunker
    and the dense retriever call this on every batch, before using it.

    Parameters
    ----------
    vectors : ndarray or scipy sparse matrix, shape (len(texts), dim)
        What ``embedder`` returned for ``texts``.
    texts : sequence of str
        The embedded texts, in row order.
    embedder : object
        The embedder, named in the message by its ``repr``.

    Raises
    ------
    UsageError
        Naming the first text whose vector is not finite (its first 60 characters), its
        row, how many rows are affected, and the embedder.
    """
    if hasattr(vectors, "tocsr"):
        sparse = vectors.tocsr()
        bad_entries = ~np.isfinite(sparse.data)
        if not bad_entries.any():
            return
        rows = np.repeat(np.arange(sparse.shape[0]), np.diff(sparse.indptr))
        bad, n_rows = np.unique(rows[bad_entries]), sparse.shape[0]
    else:
        values = np.asarray(vectors, dtype=np.float64)
        if values.ndim != 2 or np.isfinite(values).all():
            return
        bad, n_rows = np.flatnonzero(~np.isfinite(values).all(axis=1)), values.shape[0]
    first = int(bad[0])
    text = texts[first] if first < len(texts) else ""
    shown = text[:60] + ("..." if len(text) > 60 else "")
    raise UsageError(
        f"embedder {embedder!r} returned a vector with NaN or infinite values for text {first} "
        f"{shown!r} ({bad.size} of {n_rows} texts affected); a non-finite vector would "
        "decide chunk boundaries and rankings by accident. Check the model (its files, dtype or "
        "device) or use another embedder."
    )


def embedder_identity(embedder: Any) -> dict[str, Any]:
    """What names an embedder in a manifest: its class and parameters, never its ``repr``.

    Parameters
    ----------
    embedder : object
        A chunkeval embedder, or any object with ``embed``.

    Returns
    -------
    dict
        ``{"class": dotted path, "params": ...}``; a neural encoder gives its path-free
        ``describe()`` (model id, revision, weights sha256, ...) as ``"model"`` and drops its
        folder from ``"params"``.
    """
    from chunkeval._names import public_path

    params = embedder.get_params(deep=False) if hasattr(embedder, "get_params") else None
    info: dict[str, Any] = {"class": public_path(type(embedder)), "params": params}
    if hasattr(embedder, "describe") and hasattr(embedder, "spec"):
        info["model"] = embedder.describe()
        info["params"] = {**(params or {}), "model": embedder.spec}
    return info
