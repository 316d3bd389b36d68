"""Sentence embedders for the ``semantic`` chunker (and the dense retriever).

This module holds the embedder base class, the hashing, LSA and sentence-transformers
embedders and the spec grammar (:func:`get_embedder`) that names every embedder; the
submodules hold the rest:

- :mod:`~chunkeval.embedders.models`: which model folder a spec names, and its identity
  (model id, revision, weights digest -- never a path);
- :mod:`~chunkeval.embedders.architecture`: the folder's ``config.json``, weights header and
  vocabulary checked against each other at load;
- :mod:`~chunkeval.embedders.bert_graph`: the forward pass of a BERT-family encoder, an ONNX
  graph built in memory from the weights and run by onnxruntime (no torch);
- :mod:`~chunkeval.embedders.bert`: :class:`~chunkeval.embedders.bert.BertEmbedder`
  (``minilm``, ``bert:PATH``): tokenising, batching, pooling;
- :mod:`~chunkeval.embedders.remote`: :class:`~chunkeval.embedders.remote.OpenAIEmbedder`
  (``openai(...)``) over :mod:`chunkeval.endpoints`;
- :mod:`~chunkeval.embedders.cache`: the embedding cache, in memory and optionally on disk.

An embedder has ``fit(texts) -> self`` (learn from a corpus; a no-op when
nothing is learned), ``transform(texts) -> (n, d)`` vectors (a numpy array,
or a scipy sparse matrix for the hashing embedder) and ``embed(texts)``,
which fits on ``texts`` and transforms them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Self

import numpy as np

from chunkeval._params import Params
from chunkeval.errors import MissingDependency, UsageError
from chunkeval.registry import Registry
from chunkeval.specs import redacted

if TYPE_CHECKING:
    import scipy.sparse as sp
    from sklearn.feature_extraction.text import HashingVectorizer

    from chunkeval.embedders.bert import BertEmbedder
    from chunkeval.embedders.remote import OpenAIEmbedder
    from chunkeval.protocols import EmbedderLike

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
    """Base embedder: ``embed(texts)`` is ``fit(texts).transform(texts)``.

    Attributes
    ----------
    rows_independent : bool
        True when ``fit`` learns nothing and each row of ``transform`` depends on its own
        text alone, bit for bit, so that the texts of many documents may be embedded in one
        call (the ``semantic`` chunker's batches); False (the default) otherwise.
    """

    rows_independent: bool = False

    def fit(self, texts: Sequence[str]) -> Self:
        """Learn from ``texts`` (a list of n strings); a no-op by default.

        Returns
        -------
        Embedder
            ``self``.
        """
        return self

    def transform(self, texts: Sequence[str]) -> np.ndarray | sp.spmatrix:
        """Vectors of ``texts``.

        Returns
        -------
        ndarray or scipy sparse matrix of shape (len(texts), d)
        """
        raise NotImplementedError

    def embed(self, texts: Sequence[str]) -> np.ndarray | sp.spmatrix:
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

    #: Fitting learns nothing, and a text's hashed, L2-normalised row depends on that text alone.
    rows_independent = True

    def transform(self, texts: Sequence[str]) -> sp.csr_matrix:
        """Sparse L2-normalised vectors, a scipy CSR matrix of shape ``(len(texts), n_features)``.

        Word unigrams are hashed by :func:`hash_words` (the vectorizer's matrix, bit for bit,
        without a Python step per token); bigrams go through scikit-learn's
        ``HashingVectorizer``.
        """
        texts = list(texts)
        if self.ngram_max != 1 or not texts:
            return self._vectorizer().transform(texts)
        return hash_words(texts, self.n_features, self._vectorizer())

    def _vectorizer(self) -> HashingVectorizer:
        """The ``HashingVectorizer`` of the current parameters, built once.

        It is validated when built: a new one per call cost more than hashing a short document's
        sentences.
        """
        key = (self.n_features, self.ngram_max)
        cached = getattr(self, "vectorizer_", None)
        if cached is None or cached[0] != key:
            from sklearn.feature_extraction.text import HashingVectorizer

            vectorizer = HashingVectorizer(
                n_features=self.n_features,
                ngram_range=(1, self.ngram_max),
                alternate_sign=False,
                token_pattern=_WORD_PATTERN,
            )
            cached = self.vectorizer_ = (key, vectorizer)
        return cached[1]


# The vectorizer's view of each code point, filled one 4096-code-point page at a time on first
# sight (as the regex tokenizer's class table; 4.4 MB for the life of the process): its lower
# case when that is a regex word character (``\w``), a space when it is not, _UNSURE when
# lower-casing it depends on its neighbours (capital sigma) or gives several characters.
_PAGE = 12
_UNSURE = np.uint32(0xFFFFFFFF)
_TOKEN_CODE = np.zeros(0x110000, dtype=np.uint32)
_PAGE_READY = np.zeros(0x110000 >> _PAGE, dtype=bool)
_JOINER = 10  # between two texts: a byte no token or space can be


def _token_codes(codes: np.ndarray) -> np.ndarray:
    """``_TOKEN_CODE[codes]``, filling the table's pages up to the highest code point first.

    ``_TOKEN_CODE[codes]``, first filling every page up to the highest code point's (so that
    the next call checks one slice: about 0.1 s once for a text with emoji, page 0x1F).
    """
    top = int(codes.max(initial=0)) >> _PAGE
    if not _PAGE_READY[: top + 1].all():
        for page in np.flatnonzero(~_PAGE_READY[: top + 1]).tolist():
            lo = page << _PAGE
            for c in range(lo, lo + (1 << _PAGE)):
                low = chr(c).lower()
                sure = c != 0x3A3 and len(low) == 1
                _TOKEN_CODE[c] = (ord(low) if _WORD.match(low) else 32) if sure else _UNSURE
            _PAGE_READY[page] = True
    return _TOKEN_CODE[codes.astype(np.intp)]  # an intp index: numpy casts a uint32 one slowly


_WORD = re.compile(r"\w")


def _rotl(x: np.ndarray, r: int) -> np.ndarray:
    return (x << np.uint32(r)) | (x >> np.uint32(32 - r))


def _mix(k: np.ndarray) -> np.ndarray:
    return _rotl(k * np.uint32(0xCC9E2D51), 15) * np.uint32(0x1B873593)


def murmur3_runs(data: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """MurmurHash3 (x86, 32 bits, seed 0) of each byte run ``data[starts[i]:ends[i]]``, at once.

    The hash scikit-learn's ``FeatureHasher`` applies to a feature's UTF-8 bytes
    (``sklearn.utils.murmurhash3_32``), computed for every run together with uint32 array
    arithmetic, which wraps modulo 2**32 as the C code does; block ``k`` is mixed into the
    runs still that long. A run's tail (its last ``size % 4`` bytes) is mixed into every
    run at once: a run without one mixes in the word 0, which leaves its hash unchanged.

    Parameters
    ----------
    data : ndarray of uint8
    starts, ends : ndarray of int64, shape (n,)
        Half-open byte ranges into ``data``.

    Returns
    -------
    ndarray of int32, shape (n,)
        The signed hashes, as ``murmurhash3_32(bytes, seed=0)`` returns them.

    References
    ----------
    .. [1] A. Appleby, "MurmurHash3", SMHasher, 2011 (``MurmurHash3_x86_32``).
    """
    # words[o]: the little-endian uint32 of the 4 bytes from offset o (an unaligned view of
    # the padded bytes, nothing copied)
    padded = np.concatenate([data, np.zeros(4, dtype=np.uint8)])
    words = np.ndarray((len(data) + 1,), dtype="<u4", buffer=padded, strides=(1,))
    size = ends - starts
    blocks = size // 4
    h = np.zeros(len(starts), dtype=np.uint32)
    live = np.flatnonzero(blocks)
    k = 0
    while len(live):
        x = h[live] ^ _mix(words[starts[live] + 4 * k])
        h[live] = _rotl(x, 13) * np.uint32(5) + np.uint32(0xE6546B64)
        k += 1
        live = live[blocks[live] > k]
    keep = (np.uint32(1) << (8 * (size % 4)).astype(np.uint32)) - np.uint32(1)  # 0 without a tail
    h ^= _mix(words[starts + 4 * blocks] & keep)
    h ^= size.astype(np.uint32)
    h ^= h >> np.uint32(16)
    h *= np.uint32(0x85EBCA6B)
    h ^= h >> np.uint32(13)
    h *= np.uint32(0xC2B2AE35)
    h ^= h >> np.uint32(16)
    return h.view(np.int32)


def hash_words(texts: list[str], n_features: int, vectorizer: HashingVectorizer) -> sp.csr_matrix:
    r"""Hashed, L2-normalised word counts of ``texts``, as scikit-learn's ``HashingVectorizer``.

    Equal to ``vectorizer.transform(texts)``, bit for bit, for ``vectorizer =
    HashingVectorizer(n_features=n_features, alternate_sign=False,
    token_pattern=r"(?u)\b\w+\b")``.

    The vectorizer lower-cases each text, takes its maximal runs of ``\w`` characters as
    tokens, hashes each token's UTF-8 bytes into a column, and builds a CSR matrix whose
    duplicates it sums and whose rows it L2-normalises. Here the tokens of all the texts are
    found at once with array operations (each code point looked up once in
    ``_TOKEN_CODE``: its lower case when that is a word character, else a space) and hashed
    by :func:`murmur3_runs`, without a Python step per token; the matrix is then finished
    by the same scipy and scikit-learn calls as the vectorizer's. The rare texts holding a
    character whose lower case depends on its neighbours (capital sigma) or is several
    characters (U+0130) are given to the vectorizer itself.

    Parameters
    ----------
    texts : list of str, non-empty
    n_features : int
        Number of hash buckets (columns), >= 1.
    vectorizer : sklearn.feature_extraction.text.HashingVectorizer
        As above, for the rare texts.

    Returns
    -------
    scipy.sparse.csr_matrix of shape (len(texts), n_features)
        float64, sorted column indices.
    """
    from scipy.sparse import csr_matrix

    n = len(texts)
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=n)
    ends = np.cumsum(lengths + 1) - 1  # where each text ends in the texts joined by spaces
    masked = _token_codes(
        np.frombuffer(" ".join(texts).encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    )
    top, unsure = int(masked.max(initial=0)), []
    if top == _UNSURE:  # the highest code: a text to hash below by the vectorizer
        unsure = np.unique(np.searchsorted(ends, np.flatnonzero(masked == _UNSURE), side="right")).tolist()
        for i in unsure:
            masked[ends[i] - lengths[i] : ends[i]] = 32
        top = int(masked.max(initial=0))
    masked[ends[:-1]] = _JOINER
    if top < 128:
        data = masked.astype(np.uint8)
    else:
        data = np.frombuffer(masked.tobytes().decode("utf-32-le").encode("utf-8"), dtype=np.uint8)
    # a token is a maximal run of word bytes: every byte above the space (32), joiners being 10
    inside = np.zeros(len(data) + 2, dtype=bool)
    np.greater(data, 32, out=inside[1:-1])
    edges = np.flatnonzero(inside[1:] != inside[:-1])
    starts, stops = edges[0::2], edges[1::2]
    h = murmur3_runs(data, starts, stops).astype(np.int64)
    # FeatureHasher's column: abs(h) % n_features, abs(-2**31) taken as 2**31 - 1 - (n_features - 1)
    cols = np.where(h == -(2**31), 2**31 - 1 - (n_features - 1), np.abs(h)) % n_features
    # each (text, column) once with its count, columns rising in each row: the vectorizer's
    # summed duplicates, by one sort of the keys row * n_features + column
    keys = np.sort(np.searchsorted(np.flatnonzero(data == _JOINER), starts) * n_features + cols)
    new = np.empty(len(keys), dtype=bool)
    new[:1] = True
    np.not_equal(keys[1:], keys[:-1], out=new[1:])
    firsts = np.flatnonzero(new)
    counts = np.concatenate([firsts[1:], [len(keys)]]) - firsts
    row = keys[firsts] // n_features
    # sklearn's L2 normalisation, without its per-call validation: the counts are whole
    # numbers, so their squares sum exactly in any order, and each count is divided by the
    # square root of that sum as scikit-learn's loop does
    norms = np.sqrt(np.bincount(row, counts**2, minlength=n))
    matrix = csr_matrix(
        (
            counts / norms[row],
            (keys[firsts] % n_features).astype(np.int32),
            np.searchsorted(row, np.arange(n + 1)).astype(np.int32),
        ),
        shape=(n, n_features),
    )
    return _with_rows(matrix, unsure, vectorizer.transform([texts[i] for i in unsure])) if unsure else matrix


def _with_rows(matrix: sp.csr_matrix, rows: list[int], replacement: sp.csr_matrix) -> sp.csr_matrix:
    """``matrix`` (CSR) with its rows ``rows`` taken from ``replacement``.

    ``rows`` is increasing and those rows are empty in ``matrix``; ``replacement`` (CSR) has one
    row per entry of ``rows``, and its entries are copied unchanged.
    """
    from scipy.sparse import csr_matrix

    n = matrix.shape[0]
    sizes, first = np.diff(matrix.indptr).astype(np.int64), matrix.indptr[:-1].astype(np.int64)
    sizes[rows] = np.diff(replacement.indptr)
    first[rows] = replacement.indptr[:-1].astype(np.int64) + matrix.nnz
    indptr = np.concatenate([[0], np.cumsum(sizes)])
    take = np.repeat(first - indptr[:-1], sizes) + np.arange(indptr[-1])
    data = np.concatenate([matrix.data, replacement.data])[take]
    indices = np.concatenate([matrix.indices, replacement.indices])[take]
    return csr_matrix((data, indices.astype(np.int32), indptr.astype(np.int32)), shape=(n, matrix.shape[1]))


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
        """Fit the TF-IDF vocabulary and the truncated SVD on ``texts``.

        The SVD keeps ``min(n_components, n_texts - 1, n_words - 1)`` components and is skipped
        (raw TF-IDF rows are used) when that is under 2; a corpus with no words leaves the
        embedder unfitted, and :meth:`transform` then gives zero vectors.

        Parameters
        ----------
        texts : sequence of str
            The corpus.

        Returns
        -------
        LSAEmbedder
            ``self``.
        """
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
        """Embed ``texts`` with the fitted TF-IDF and SVD.

        Parameters
        ----------
        texts : sequence of str
            The texts to embed.

        Returns
        -------
        numpy.ndarray
            Shape ``(len(texts), k)``: the SVD's ``k`` components, the TF-IDF vocabulary's size
            when the SVD was skipped, or 1 (zeros) when the corpus had no words.
        """
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
        """Embed ``texts`` with the sentence-transformers model, loaded from the local cache on first use.

        Parameters
        ----------
        texts : sequence of str
            The texts to embed.

        Returns
        -------
        numpy.ndarray
            Shape ``(len(texts), dim)``, float32, each row L2-normalised.

        Raises
        ------
        chunkeval.errors.MissingDependency
            sentence-transformers is not installed (``pip install 'chunkeval[embeddings]'``).
        """
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


def _minilm(argument: str | None, **params: Any) -> BertEmbedder:
    """all-MiniLM-L6-v2 from its installed weights package (see :mod:`chunkeval.embedders.bert`)."""
    from chunkeval.embedders.bert import BertEmbedder

    if argument is not None:
        raise UsageError(f"embedder 'minilm' takes no argument after ':', got {argument!r}; use bert:PATH")
    return BertEmbedder("minilm", **params)


def _bert(argument: str | None, **params: Any) -> BertEmbedder:
    """A BERT-family model folder, ``bert:PATH``, run by chunkeval's BERT encoder (onnxruntime)."""
    from chunkeval.embedders.bert import BertEmbedder

    if not argument and "model" not in params:
        raise UsageError(
            "embedder 'bert' needs a model folder: bert:PATH (config.json, tokenizer.json, model.safetensors)"
        )
    return BertEmbedder(argument, **params) if argument else BertEmbedder(**params)


def _openai(argument: str | None, **params: Any) -> OpenAIEmbedder:
    """A model behind an OpenAI-compatible embeddings endpoint, ``openai(model=, base_url=, ...)``."""
    from chunkeval.embedders.remote import OpenAIEmbedder
    from chunkeval.endpoints.config import EndpointConfig

    if argument is not None:
        raise UsageError(
            f"embedder 'openai' takes no argument after ':', got {argument!r}; write "
            "openai(model='NAME', base_url='http://HOST:PORT/v1', api_key_env='VAR')"
        )
    _, rest = EndpointConfig.from_params(params)  # a key in the spec is refused here, unshown
    takes = OpenAIEmbedder._get_param_names()
    unknown = sorted(set(rest) - set(takes))
    if unknown:
        raise UsageError(
            f"embedder 'openai': unknown parameter(s) {', '.join(unknown)}; openai(...) takes "
            f"{', '.join(takes)}"
        )
    embedder = OpenAIEmbedder(**params)
    embedder.endpoint()  # a missing model or base_url, or a bad parameter, fails here
    return embedder


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


def _plugin_embedder(name: str, obj: Any, target: str) -> Callable[[str | None], EmbedderLike]:
    """The embedder factory of a ``chunkeval.embedders`` entry point.

    A ``chunkeval.embedders`` entry point names a callable returning an embedder: called
    with no argument for ``NAME``, with ``ARG`` for ``NAME:ARG``.
    """
    if not callable(obj):
        raise TypeError(f"expected a callable returning an embedder, got {obj!r}")

    def make(argument: str | None) -> EmbedderLike:
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
EMBEDDERS.add("openai", _openai)


def get_embedder(spec) -> EmbedderLike:
    """Embedder from a spec or an object.

    Parameters
    ----------
    spec : str or object
        ``NAME[:ARG][(key=value, ...)]``: ``"hashing"``, ``"lsa"``, ``"minilm"`` (all-MiniLM-L6-v2
        from its installed weights package), ``"bert:PATH"`` (a BERT-family model folder),
        ``"openai(model='NAME', base_url='http://HOST:PORT/v1', api_key_env='VAR')"`` (an
        OpenAI-compatible embeddings endpoint), ``"sentence-transformers[:MODEL]"``, an installed plug-in, or
        ``"python:package.module:factory(key=value)"``; keyword parameters go to the
        embedder (``"minilm(query_prefix='query: ', batch_size=16)"``). An object with
        ``embed`` is returned unchanged.

    Returns
    -------
    EmbedderLike
        An object with ``embed(list[str])`` (an :class:`Embedder` for the built-in names; a
        plug-in's may have no ``fit`` or ``transform``: use :func:`fitted` and
        :func:`vectors`).

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
            raise UsageError(f"embedder {redacted(spec)!r} returned {made!r}, which has no embed(texts)")
        return made
    name, colon, argument = head.partition(":")
    factory = EMBEDDERS.get(name)
    try:
        return factory(argument if colon else None, **params)
    except TypeError as error:
        raise UsageError(f"embedder {redacted(spec)!r}: {error}") from None


def check_finite(vectors: np.ndarray | sp.spmatrix, texts: Sequence[str], embedder: object) -> None:
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


def fitted(embedder: EmbedderLike, texts: Sequence[str]) -> EmbedderLike:
    """``embedder`` fitted on ``texts`` when it learns, else ``embedder`` itself.

    The one rule for every place that fits an embedder on a corpus (the dense retriever on
    the chunks, ``draft-questions --similarity-embedder`` on the documents): ``fit`` is
    optional in :class:`~chunkeval.protocols.EmbedderLike`, so a plug-in with only ``embed``
    is used as it is. What ``fit`` returns is used when it is an embedder (scikit-learn
    style, returning ``self`` or a fitted copy); otherwise the embedder fitted in place.

    Parameters
    ----------
    embedder : object
        An object with ``embed(texts)`` and perhaps ``fit(texts)``; the caller clones it
        first if the object given by a user must not change.
    texts : sequence of str, length n
        The corpus to learn from.

    Returns
    -------
    object
        The embedder to map texts with (:func:`vectors`).
    """
    fit = getattr(embedder, "fit", None)
    if fit is None:
        return embedder
    made = fit(list(texts))
    return made if made is not None and hasattr(made, "embed") else embedder


def vectors(embedder: EmbedderLike, texts: Sequence[str]) -> np.ndarray | sp.spmatrix:
    """Vectors of ``texts`` by an embedder :func:`fitted` before, checked finite.

    An embedder with ``fit`` and ``transform`` (scikit-learn style, like those of this
    module, whose ``embed`` refits) maps ``texts`` with ``transform``, into the space it
    was fitted in; any other uses ``embed``.

    Parameters
    ----------
    embedder : object
        What :func:`fitted` returned.
    texts : sequence of str, length n

    Returns
    -------
    ndarray or scipy sparse matrix of shape (n, d)

    Raises
    ------
    UsageError
        When a vector has a NaN or infinite value (:func:`check_finite`).
    """
    transform = getattr(embedder, "transform", None) if hasattr(embedder, "fit") else None
    out = transform(texts) if transform is not None else embedder.embed(texts)
    check_finite(out, texts, embedder)
    return out


def embedder_identity(embedder: EmbedderLike) -> dict[str, Any]:
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
        folder from ``"params"``; an endpoint embedder gives its ``describe()`` (model, host)
        and drops its ``unrecorded_params`` (the URL) from ``"params"``, and moves its
        ``transport_params`` (batch size, requests in flight, timeouts, retries: nothing that
        changes a vector) to ``"transport"``, which ``compare`` does not compare.
    """
    from chunkeval._params import public_path

    params = embedder.get_params(deep=False) if hasattr(embedder, "get_params") else None
    info: dict[str, Any] = {"class": public_path(type(embedder)), "params": params}
    if hasattr(embedder, "describe") and hasattr(embedder, "spec"):
        info["model"] = embedder.describe()
        info["params"] = {**(params or {}), "model": embedder.spec}
    elif hasattr(embedder, "describe") and hasattr(embedder, "unrecorded_params"):  # an endpoint
        info["model"] = embedder.describe()
        kept = {k: v for k, v in (params or {}).items() if k not in embedder.unrecorded_params}
        transport = getattr(embedder, "transport_params", ())
        info["params"] = {k: v for k, v in kept.items() if k not in transport}
        if transport:
            info["transport"] = {k: v for k, v in kept.items() if k in transport}
    return info
