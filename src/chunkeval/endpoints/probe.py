"""Know the server: a fixed probe embedded at the start of a run, and a digest of what came back.

Two servers answering to one model name at one address can give different vectors (a window
raised from 256 to 512 wordpieces changed 355 of 528 top-10 lists), and a server that serves
one model answers for any model name. Nothing in a request shows this; the vectors do. So an
endpoint embedder first sends :data:`PROBE_TEXTS` -- a short sentence and a text of about
2,400 wordpieces, longer than any common window, so that a change of window shows -- and
keeps :func:`probe_digest` of the vectors, with the reply's own ``model`` field:

* the digest joins the embedding cache's namespace, so vectors of a changed server are never
  reused (a warm cache costs this one request);
* both go to the manifest (``describe()["server"]``), so a run says which server answered.

The digest is of the signs of the unit vectors' components and their dimension: a sign
flips only for a component within float noise of zero (so a server that repeats itself gives
the same digest), while a different model, window or pooling flips many. A server that
refuses the long text (a 4xx: some refuse inputs longer than their window rather than cut
them) is probed with the short one alone, and that refusal is part of the digest.
"""

from __future__ import annotations

import hashlib

import numpy as np

__all__ = ["PROBE_TEXTS", "probe_digest", "same_model"]


def _long_probe() -> str:
    words = (
        "river stone lantern harvest quiet engine marble orbit canvas thunder pocket meadow "
        "signal copper whisper garden ladder frozen compass velvet island pepper circuit amber"
    ).split()
    # a fixed, varied sequence (no randomness, no file): word i*7 mod 24 of sentence n
    sentences = [
        " ".join(words[(n * 5 + i * 7) % len(words)] for i in range(12)).capitalize() + "."
        for n in range(200)
    ]
    return " ".join(sentences)


#: The probe: a short sentence, and about 2,400 words (longer than the usual 256..2048-token
#: windows, shorter than 8192-token ones).
PROBE_TEXTS: tuple[str, str] = (
    "chunkeval probe: the quick brown fox jumps over the lazy dog.",
    _long_probe(),
)


def probe_digest(vectors: np.ndarray, long_refused: bool = False) -> str:
    """The digest of the probe's vectors: their dimension and the signs of their components.

    Parameters
    ----------
    vectors : ndarray of float, shape (k, dim)
        The probe's vectors, in the order of :data:`PROBE_TEXTS` (k = 1 when the long text
        was refused).
    long_refused : bool, default False
        The server refused the long text.

    Returns
    -------
    str
        16 hex digits.
    """
    rows = np.asarray(vectors, dtype=np.float64)
    h = hashlib.sha256(f"{rows.shape[1]}:{int(long_refused)}:".encode())
    h.update(np.packbits(rows > 0).tobytes())
    return h.hexdigest()[:16]


def same_model(requested: str, answered: object) -> bool:
    """Whether a reply's ``model`` field names the requested model.

    Equal, or equal once a ``:latest`` tag (Ollama) and a leading ``models/`` or organisation
    folder (``BAAI/bge-small-en-v1.5`` answered as ``bge-small-en-v1.5``) are ignored. A reply
    without a ``model`` field names nothing, and is taken as the same.
    """
    if not isinstance(answered, str) or not answered:
        return True

    def plain(name: str) -> str:
        name = name.strip().lower().removesuffix(":latest")
        return name.rsplit("/", 1)[-1]

    return plain(requested) == plain(answered)
