"""A BERT model folder checked against itself before any weight is read.

``config.json`` declares an architecture; ``model.safetensors`` and ``tokenizer.json`` must be
that architecture. :func:`check_model_folder` reads the three once, at load, and refuses (one
:class:`~chunkeval.errors.UsageError` line naming the file and the problem) a folder where

* ``config.json`` is not a JSON object, lacks a key that fixes a tensor's shape, gives one
  that is not a positive integer or is past its sane bound (:data:`SHAPE_BOUNDS`: a config
  declaring a billion layers is refused before any table of them is built), a ``hidden_size`` that ``num_attention_heads`` does not
  divide, a layer-norm epsilon that is not a positive number, an activation the encoder does
  not compute, or another architecture (``model_type``, ``position_embedding_type``);
* ``model.safetensors`` is smaller than the parameters ``config.json`` declares could be
  (two bytes each, as float16: counted, never listed), has no valid safetensors header
  (truncated, garbage, a header length beyond the file: the ``safetensors`` library's own
  checks), lacks a tensor of
  :meth:`BertArchitecture.tensor_shapes`, holds one of another shape or a non-float dtype,
  any tensor of a dtype numpy cannot read, or more layers than the config declares;
* ``tokenizer.json`` cannot be read by the ``tokenizers`` library, or names ids beyond the rows
  of the word embeddings (it is another model's vocabulary);
* the window (``max_seq_length``) is not a positive integer, exceeds the position table, or
  leaves no room for text after the special tokens.

Only the header of ``model.safetensors`` is read here (the ``safetensors`` library validates
its offsets against the file's length); the arrays are read afterwards by
:meth:`chunkeval.embedders.bert_graph.BertWeights.load`, on weights whose shapes are then known.
The names and shapes are those of Hugging Face ``transformers``' ``BertModel`` (with or
without the ``bert.`` prefix of a ``BertFor...`` checkpoint).
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from chunkeval.embedders.models import ModelFolder
from chunkeval.errors import MissingDependency, UsageError

if TYPE_CHECKING:
    from tokenizers import Tokenizer as HFTokenizer

__all__ = [
    "ACTIVATIONS",
    "EMBEDDING_TENSORS",
    "FLOAT_DTYPES",
    "LAYER_TENSORS",
    "NUMPY_DTYPES",
    "SHAPE_BOUNDS",
    "SHAPE_KEYS",
    "BertArchitecture",
    "CheckedModel",
    "check_model_folder",
]

#: Activations the encoder computes (:mod:`chunkeval.embedders.bert_graph`): GELU, erf and tanh forms.
ACTIVATIONS = ("gelu", "gelu_new", "gelu_pytorch_tanh")

#: safetensors dtypes of weights the encoder reads (converted to float32). BF16 has no numpy
#: type, and an integer tensor under a weight's name is not a weight.
FLOAT_DTYPES = ("F16", "F32", "F64")

#: safetensors dtypes numpy reads: every tensor of the file is read, the unused ones too
#: (``embeddings.position_ids`` is often I64), so none may have another (BF16, F8_*).
NUMPY_DTYPES = FLOAT_DTYPES + ("C64", "BOOL", "I8", "U8", "I16", "U16", "I32", "U32", "I64", "U64")

#: The keys of ``config.json`` that fix the tensors' shapes: each a positive integer.
SHAPE_KEYS = (
    "vocab_size",
    "hidden_size",
    "num_hidden_layers",
    "num_attention_heads",
    "intermediate_size",
    "max_position_embeddings",
    "type_vocab_size",
)

#: The largest value of each shape key the encoder accepts: several times the largest BERT
#: models published (BERT-large: 24 layers, hidden 1024, 16 heads, intermediate 4096, 512
#: positions; multilingual vocabularies of 250,002 wordpieces). A value past its bound is a
#: damaged or hostile config.json, refused before anything is built from it.
SHAPE_BOUNDS = {
    "vocab_size": 4_000_000,
    "hidden_size": 16_384,
    "num_hidden_layers": 512,
    "num_attention_heads": 1_024,
    "intermediate_size": 65_536,
    "max_position_embeddings": 1_048_576,
    "type_vocab_size": 1_024,
}

#: The tensors of the embeddings, each shape in the terms of ``config.json``'s keys.
EMBEDDING_TENSORS: dict[str, tuple[str, ...]] = {
    "embeddings.word_embeddings.weight": ("vocab_size", "hidden_size"),
    "embeddings.position_embeddings.weight": ("max_position_embeddings", "hidden_size"),
    "embeddings.token_type_embeddings.weight": ("type_vocab_size", "hidden_size"),
    "embeddings.LayerNorm.weight": ("hidden_size",),
    "embeddings.LayerNorm.bias": ("hidden_size",),
}

#: The tensors of each of the ``num_hidden_layers`` layers (under ``encoder.layer.{i}.``);
#: linear weights are stored ``(out, in)``, as ``torch.nn.Linear`` keeps them.
LAYER_TENSORS: dict[str, tuple[str, ...]] = {
    "attention.self.query.weight": ("hidden_size", "hidden_size"),
    "attention.self.query.bias": ("hidden_size",),
    "attention.self.key.weight": ("hidden_size", "hidden_size"),
    "attention.self.key.bias": ("hidden_size",),
    "attention.self.value.weight": ("hidden_size", "hidden_size"),
    "attention.self.value.bias": ("hidden_size",),
    "attention.output.dense.weight": ("hidden_size", "hidden_size"),
    "attention.output.dense.bias": ("hidden_size",),
    "attention.output.LayerNorm.weight": ("hidden_size",),
    "attention.output.LayerNorm.bias": ("hidden_size",),
    "intermediate.dense.weight": ("intermediate_size", "hidden_size"),
    "intermediate.dense.bias": ("intermediate_size",),
    "output.dense.weight": ("hidden_size", "intermediate_size"),
    "output.dense.bias": ("hidden_size",),
    "output.LayerNorm.weight": ("hidden_size",),
    "output.LayerNorm.bias": ("hidden_size",),
}

_LAYER_INDEX = re.compile(r"^(?:bert\.)?encoder\.layer\.(\d+)\.")


@dataclass(frozen=True)
class BertArchitecture:
    """What ``config.json`` declares, checked: the integers that fix every tensor's shape.

    Parameters
    ----------
    vocab_size, hidden_size, num_hidden_layers, num_attention_heads, intermediate_size, \
max_position_embeddings, type_vocab_size : int
        Positive; ``hidden_size`` is a multiple of ``num_attention_heads``.
    layer_norm_eps : float, default 1e-12
        Positive and finite.
    hidden_act : str, default "gelu"
        One of :data:`ACTIVATIONS`.
    """

    vocab_size: int
    hidden_size: int
    num_hidden_layers: int
    num_attention_heads: int
    intermediate_size: int
    max_position_embeddings: int
    type_vocab_size: int
    layer_norm_eps: float = 1e-12
    hidden_act: str = "gelu"

    @classmethod
    def from_config(cls, config: object, where: str) -> BertArchitecture:
        """Check a parsed ``config.json``.

        Parameters
        ----------
        config : object
            The parsed file.
        where : str
            The file's path, for the messages.

        Returns
        -------
        BertArchitecture

        Raises
        ------
        UsageError
            For the first problem of the module docstring's list found in ``config``.
        """
        if not isinstance(config, dict):
            raise UsageError(f"{where}: expected a JSON object, got {type(config).__name__}")
        for key, expected in (("model_type", "bert"), ("position_embedding_type", "absolute")):
            if key in config and config[key] != expected:
                raise UsageError(
                    f"{where}: {key} is {config[key]!r}; the BERT encoder runs BERT models "
                    f"({key} {expected!r})"
                )
        missing = [k for k in SHAPE_KEYS if k not in config]
        if missing:
            raise UsageError(
                f"{where}: missing {', '.join(missing)} (a BERT config.json gives {', '.join(SHAPE_KEYS)})"
            )
        for k in SHAPE_KEYS:
            v = config[k]
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise UsageError(f"{where}: {k} must be a positive integer, got {v!r}")
            if v > SHAPE_BOUNDS[k]:
                raise UsageError(
                    f"{where}: {k} is {v:,}, more than the {SHAPE_BOUNDS[k]:,} of any BERT model the "
                    "encoder reads (a damaged or hostile config.json)"
                )
        hidden, heads = config["hidden_size"], config["num_attention_heads"]
        if hidden % heads:
            raise UsageError(
                f"{where}: hidden_size {hidden} is not a multiple of num_attention_heads {heads}"
            )
        eps = config.get("layer_norm_eps", cls.layer_norm_eps)
        if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not (0 < eps < math.inf):
            raise UsageError(f"{where}: layer_norm_eps must be a positive number, got {eps!r}")
        act = config.get("hidden_act", cls.hidden_act)
        if act not in ACTIVATIONS:
            raise UsageError(
                f"{where}: hidden_act {act!r} is not one the encoder computes ({', '.join(ACTIVATIONS)})"
            )
        return cls(**{k: config[k] for k in SHAPE_KEYS}, layer_norm_eps=float(eps), hidden_act=act)

    def parameter_count(self) -> int:
        """The number of weights the tensors of :meth:`tensor_shapes` hold, counted without listing them.

        Returns
        -------
        int
            The embeddings' and ``num_hidden_layers`` layers' parameters.
        """
        h, i = self.hidden_size, self.intermediate_size
        embeddings = (self.vocab_size + self.max_position_embeddings + self.type_vocab_size) * h + 2 * h
        layer = 4 * (h * h + h) + 2 * h + (i * h + i) + (h * i + h) + 2 * h
        return embeddings + self.num_hidden_layers * layer

    def tensor_shapes(self, prefix: str = "") -> dict[str, tuple[int, ...]]:
        """Every tensor the encoder reads and its shape.

        The declared tables with the config's integers put in.

        Parameters
        ----------
        prefix : str, default ""
            ``"bert."`` for a checkpoint that names its tensors so.

        Returns
        -------
        dict of str to tuple of int
            ``5 + 16 * num_hidden_layers`` entries, embeddings first, then layer by layer.
        """

        def shape(dims: tuple[str, ...]) -> tuple[int, ...]:
            return tuple(int(getattr(self, d)) for d in dims)

        out = {prefix + name: shape(dims) for name, dims in EMBEDDING_TENSORS.items()}
        for i in range(self.num_hidden_layers):
            out.update(
                {f"{prefix}encoder.layer.{i}.{name}": shape(dims) for name, dims in LAYER_TENSORS.items()}
            )
        return out


@dataclass(frozen=True)
class CheckedModel:
    """A model folder whose files agree with each other.

    Parameters
    ----------
    config : dict
        ``config.json`` as parsed (what :meth:`~chunkeval.embedders.bert_graph.BertWeights.load`
        reads).
    architecture : BertArchitecture
    window : int
        Wordpieces the encoder reads of a text, special tokens included.
    tokenizer : tokenizers.Tokenizer
        ``tokenizer.json``, loaded (as read: no padding or truncation changed).
    """

    config: dict[str, Any]
    architecture: BertArchitecture
    window: int
    tokenizer: HFTokenizer


def _first(problems: list[str]) -> str:
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return problems[0] + more


def _check_weights(path: str, arch: BertArchitecture) -> None:
    """The safetensors header of ``path`` against ``arch``'s table (no array is read)."""
    try:
        from safetensors import SafetensorError, safe_open
    except ImportError:
        raise MissingDependency(
            "the BERT encoder reads weights with safetensors: pip install safetensors"
        ) from None
    try:
        with safe_open(path, framework="numpy") as f:
            slices = {name: f.get_slice(name) for name in f.keys()}  # noqa: SIM118 (not a mapping)
            header = {name: (s.get_dtype(), tuple(s.get_shape())) for name, s in slices.items()}
    except SafetensorError as exc:
        raise UsageError(
            f"{path}: not a readable safetensors file ({exc}); download or save the weights again"
        ) from None
    prefix = "bert." if "bert.embeddings.word_embeddings.weight" in header else ""
    declared, size = arch.parameter_count(), os.path.getsize(path)
    if 2 * declared > size:  # two bytes a weight at the least (F16)
        raise UsageError(
            f"{path}: holds {size:,} bytes, but config.json declares {declared:,} weights "
            f"({arch.num_hidden_layers:,} layers, at least {2 * declared:,} bytes): not the BERT model "
            "config.json declares"
        )
    expected = arch.tensor_shapes(prefix)
    missing = [name for name in expected if name not in header]
    if missing:
        raise UsageError(
            f"{path}: no tensor {_first(missing)}: not the BERT model config.json declares "
            f"({arch.num_hidden_layers} layers)"
        )
    wrong = [
        f"{name} has shape {header[name][1]}, config.json declares {shape}"
        for name, shape in expected.items()
        if header[name][1] != shape
    ]
    if wrong:
        raise UsageError(f"{path}: tensor {_first(wrong)}")
    dtypes = [f"{name} is {header[name][0]}" for name in expected if header[name][0] not in FLOAT_DTYPES]
    if dtypes:
        raise UsageError(
            f"{path}: tensor {_first(dtypes)}; the encoder reads float weights ({', '.join(FLOAT_DTYPES)})"
        )
    unreadable = [f"{name} is {dtype}" for name, (dtype, _) in header.items() if dtype not in NUMPY_DTYPES]
    if unreadable:
        raise UsageError(f"{path}: tensor {_first(unreadable)}, a dtype numpy cannot read; save it as F32")
    layers = {int(m.group(1)) for name in header if (m := _LAYER_INDEX.match(name))}
    if layers and max(layers) >= arch.num_hidden_layers:
        raise UsageError(
            f"{path}: holds tensors of layer {max(layers)} (counting from 0), but config.json declares "
            f"num_hidden_layers {arch.num_hidden_layers}"
        )


def _load_tokenizer(path: str, arch: BertArchitecture) -> HFTokenizer:
    """``tokenizer.json``, whose every id has a row in the word embeddings."""
    try:
        from tokenizers import Tokenizer
    except ImportError:
        raise MissingDependency(
            "the BERT encoder tokenises with tokenizers: pip install tokenizers"
        ) from None
    try:
        tok = Tokenizer.from_file(path)
    except Exception as exc:  # the library raises a bare Exception for every parse error
        raise UsageError(f"{path}: not a tokenizer the tokenizers library reads ({exc})") from None
    vocab = tok.get_vocab(with_added_tokens=True)
    top = max(vocab.values(), default=-1)
    # a table with more rows than the vocabulary is common (padded: multilingual-e5-small
    # has 250,037 rows for 250,002 wordpieces); an id with no row is another model's vocabulary
    if top >= arch.vocab_size:
        raise UsageError(
            f"{path}: the vocabulary has ids up to {top}, but the word embeddings have "
            f"{arch.vocab_size} rows (config.json vocab_size): the tokenizer is another model's"
        )
    return tok


def _window(folder: ModelFolder, arch: BertArchitecture, tok: HFTokenizer, max_seq_length: int | None) -> int:
    """The encoder's window in wordpieces.

    The window in wordpieces: ``max_seq_length`` given, else the folder's
    ``sentence_bert_config.json``, else the position table.
    """
    value: object  # read from a JSON file: checked below
    if max_seq_length is not None:
        value, where = max_seq_length, "max_seq_length"
    else:
        st = folder.read_json("sentence_bert_config.json", dict) or {}
        value, where = (
            st.get("max_seq_length"),
            f"{folder.path / 'sentence_bert_config.json'}: max_seq_length",
        )
        if value is None:
            return arch.max_position_embeddings
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise UsageError(f"{where} must be a positive integer, got {value!r}")
    if value > arch.max_position_embeddings:
        raise UsageError(
            f"{where} {value} exceeds the model's {arch.max_position_embeddings} positions "
            "(config.json max_position_embeddings)"
        )
    special = tok.num_special_tokens_to_add(False)
    if value <= special:
        raise UsageError(f"{where} {value} leaves no room for text after the {special} special tokens")
    return value


def check_model_folder(folder: ModelFolder, max_seq_length: int | None = None) -> CheckedModel:
    """Read and check a BERT model folder's config, weights header and tokenizer, once.

    Parameters
    ----------
    folder : ModelFolder
        From :func:`chunkeval.embedders.models.resolve_model` (its three files exist).
    max_seq_length : int or None, default None
        The window asked for; None: the folder's own.

    Returns
    -------
    CheckedModel

    Raises
    ------
    UsageError
        For any problem of the module docstring's list, naming the file.
    MissingDependency
        Without ``safetensors`` or ``tokenizers``.
    """
    config = folder.read_json("config.json")
    arch = BertArchitecture.from_config(config, str(folder.path / "config.json"))
    _check_weights(str(folder.path / "model.safetensors"), arch)
    tok = _load_tokenizer(str(folder.path / "tokenizer.json"), arch)
    return CheckedModel(dict(config), arch, _window(folder, arch, tok, max_seq_length), tok)
