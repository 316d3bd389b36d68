"""The embedding cache cannot lie: every file checked before use, bad ones set aside and recomputed."""

from __future__ import annotations

import json
import os
import shutil
import threading
import warnings

import numpy as np
import pytest
from _minilm import needs_minilm

from chunkeval.caches import clear_caches
from chunkeval.cli import main
from chunkeval.embedders import cache
from chunkeval.errors import CacheWarning, UsageError

TEXTS = ["alpha beta", "gamma", "delta epsilon zeta", "eta"]
A, B = cache.cache_namespace({"model": "a"}), cache.cache_namespace({"model": "b"})


def _vectors(texts: list[str], model: str = "a") -> np.ndarray:
    """Deterministic vectors that differ between the two 'models'."""
    seed = 1 if model == "a" else 2
    return np.array(
        [[len(t) * seed, t.count("a") + seed, seed / (1 + len(t))] for t in texts], dtype=np.float32
    )


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.setenv(cache.CACHE_ENV, str(tmp_path / "cache"))
    clear_caches()
    yield tmp_path / "cache"
    clear_caches()


def _lookup(namespace: str = A, model: str = "a") -> tuple[np.ndarray, list[str]]:
    computed: list[str] = []

    def compute(texts):
        computed.extend(texts)
        return _vectors(texts, model)

    return cache.cached_vectors(namespace, "", TEXTS, compute), computed


def _fill(folder) -> list:
    vectors, computed = _lookup()
    assert computed == TEXTS
    clear_caches()  # a new process
    again, computed = _lookup()
    assert computed == [] and np.array_equal(again, vectors)
    return sorted((folder / A[:32]).glob("*.vec"))


def _flip(path) -> None:
    data = bytearray(path.read_bytes())
    data[-3] ^= 0x01
    path.write_bytes(bytes(data))


def _truncate(path) -> None:
    path.write_bytes(path.read_bytes()[:-7])


def _other_model(path) -> None:
    clear_caches()
    cache.cached_vectors(B, "", TEXTS, lambda texts: _vectors(texts, "b"))
    (other,) = (path.parent.parent / B[:32]).glob("*.vec")
    os.replace(other, path)  # model b's file under model a's name


def _foreign(path) -> None:
    (path.parent / "notes.txt").write_text("not a vector file")


def _odd_name(path) -> None:
    os.replace(path, path.with_name("copy of " + path.name))


def _folder_inside(path) -> None:
    (path.parent / "0123456789abcdef0123456789abcdef.vec").mkdir()


@pytest.mark.parametrize(
    ("damage", "why"),
    [
        (_flip, "fails its checksum"),
        (_truncate, "bytes of data where its header announces"),
        (_other_model, "belongs to another model"),
        (_foreign, "is not a file the cache writes"),
        (_odd_name, "is not a file the cache writes"),
        (_folder_inside, "is not a file the cache writes"),
    ],
    ids=["flipped-byte", "truncated", "another-model", "foreign-file", "odd-name", "folder"],
)
def test_a_bad_file_is_set_aside_with_one_warning_and_its_vectors_recomputed(folder, damage, why):
    (path,) = _fill(folder)
    damage(path)
    clear_caches()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        vectors, computed = _lookup()
    messages = [str(w.message) for w in caught if issubclass(w.category, CacheWarning)]
    assert len(messages) == 1 and why in messages[0] and "\n" not in messages[0]
    assert np.array_equal(vectors, _vectors(TEXTS))  # the same numbers as without a cache
    if damage not in (_foreign, _folder_inside):
        assert computed == TEXTS  # recomputed
    assert list((folder / cache.SET_ASIDE).iterdir())
    clear_caches()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the bad file is gone: no second warning
        _lookup()
    cache._prune(folder, 0)  # whatever was set aside (a folder too), the size bound holds
    assert not [p for p in folder.rglob("*") if p.is_file()]


def test_file_format_round_trip_and_checks():
    keys = [bytes([i]) * 32 for i in range(3)]
    vectors = np.arange(12, dtype=np.float32).reshape(3, 4)
    data = cache._encode_file(A, keys, vectors)
    got_keys, got = cache.read_vector_file(data, A)
    assert got_keys == keys and np.array_equal(got, vectors)
    with pytest.raises(ValueError, match="another model"):
        cache.read_vector_file(data, B)
    with pytest.raises(ValueError, match="not a chunkeval vector file"):
        cache.read_vector_file(b"PK\x03\x04" + data, A)
    nan = cache._encode_file(A, keys[:1], np.array([[np.nan, 1.0]], dtype=np.float32))
    with pytest.raises(ValueError, match="non-finite"):
        cache.read_vector_file(nan, A)


def test_a_folder_that_is_a_file_exits_2_naming_it(tmp_path, capsys):
    not_a_folder = tmp_path / "cache.txt"
    not_a_folder.write_text("x")
    with pytest.raises(UsageError, match="is a file, not a folder"):
        cache.check_cache_folder(not_a_folder)
    code = main(["run", "--chunker", "sentence", "--cache", str(not_a_folder), "--quiet", "--no-report"])
    err = capsys.readouterr().err
    assert code == 2 and str(not_a_folder) in err and len(err.strip().splitlines()) == 1


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root writes anywhere")
def test_an_unwritable_folder_is_a_usage_error(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    with pytest.raises(UsageError, match="cannot be used"):
        cache.check_cache_folder(locked / "vectors")


def test_concurrent_writers_and_readers_never_see_a_torn_file(folder):
    stop = threading.Event()

    def write():
        for i in range(60):
            texts = [f"text {i} {j}" for j in range(20)]
            cache.cached_vectors(A, "", texts, lambda t: np.ones((len(t), 64), dtype=np.float32))
        stop.set()

    writer = threading.Thread(target=write)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CacheWarning)
        writer.start()
        reads = 0
        while not stop.is_set() or reads == 0:
            cache._DISK_LOADED.pop((str(folder), A), None)
            cache._load_disk(folder, A)  # reads every finished file; none may fail its checks
            reads += 1
        writer.join()
    assert len(list((folder / A[:32]).glob("*.vec"))) == 60
    assert not (folder / cache.SET_ASIDE).exists()


def test_dimensions_that_differ_within_one_namespace_are_refused(folder):
    cache.cached_vectors(A, "", ["x"], lambda t: np.ones((1, 3), dtype=np.float32))
    with pytest.raises(UsageError, match="dimensions"):
        cache.cached_vectors(A, "", ["x", "y"], lambda t: np.ones((1, 5), dtype=np.float32))


def _minilm_folder():
    from chunkeval.embedders.models import resolve_model

    return resolve_model("minilm").path


@pytest.mark.slow
@pytest.mark.parametrize(
    ("changed", "content"),
    [
        pytest.param("config.json", None, marks=needs_minilm(), id="config-layer-norm-eps"),
        pytest.param("tokenizer.json", None, marks=needs_minilm(), id="tokenizer-case"),
        pytest.param(
            "1_Pooling/config.json",
            '{"word_embedding_dimension": 384, "pooling_mode_cls_token": true}',
            marks=needs_minilm(),
            id="cls-pooling",
        ),
    ],
)
def test_a_model_read_another_way_never_shares_vectors(folder, tmp_path, changed, content):
    """The field bug: a 2-layer folder over MiniLM's weights wrote vectors that MiniLM runs read
    back (such a config is refused at load now). Each file that changes a vector is in the
    cache key: the same weights read another way never share vectors on disk."""

    from chunkeval.embedders.bert import BertEmbedder

    source = _minilm_folder()
    other = tmp_path / "other-model"
    shutil.copytree(source, other, ignore=shutil.ignore_patterns("model.safetensors"))
    (other / "model.safetensors").symlink_to(source / "model.safetensors")
    if changed == "config.json":  # the same shapes (a 2-layer config is refused at load now)
        config = json.loads((other / "config.json").read_text())
        content = json.dumps({**config, "layer_norm_eps": 0.5})
    elif changed == "tokenizer.json":  # upper case kept: other wordpieces
        tokenizer = json.loads((other / "tokenizer.json").read_text())
        tokenizer["normalizer"]["lowercase"] = False
        content = json.dumps(tokenizer)
    (other / changed).write_text(content)

    texts = ["Cats hunt at Night in Paris.", "Rice grows well HERE."]
    theirs = BertEmbedder(str(other)).transform(texts)
    clear_caches()  # a new process, the other model's vectors on disk
    ours = BertEmbedder("minilm").transform(texts)
    os.environ.pop(cache.CACHE_ENV)
    clear_caches()
    reference = BertEmbedder("minilm").transform(texts)
    assert np.array_equal(ours, reference)
    assert not np.allclose(theirs, reference, atol=1e-3)
