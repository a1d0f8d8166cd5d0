"""The fallback scorer's weights, hot-reloaded when the file changes (or on SIGHUP).

A bad file is rejected with a clear log line and the previous weights stay in force, so a
tuning mistake can never take selection down.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from scheduling import DEFAULT_WEIGHTS, ScoringWeights, WeightsFileError, load_weights

log = logging.getLogger("app.weights")


class WeightsStore:
    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._weights = DEFAULT_WEIGHTS
        self._stamp: tuple[int, int] | None = None
        if path is not None:
            self._weights = load_weights(path)  # start-up: a bad file stops the server
            self._stamp = self._stat()

    def _stat(self) -> tuple[int, int] | None:
        try:
            st = os.stat(self.path)  # type: ignore[arg-type]
        except OSError:
            return None
        return (st.st_mtime_ns, st.st_size)

    def reload(self, *, force: bool = False) -> ScoringWeights:
        if self.path is None:
            return self._weights
        stamp = self._stat()
        if not force and stamp == self._stamp:
            return self._weights
        self._stamp = stamp
        try:
            self._weights = load_weights(self.path)
            log.info("loaded scoring weights %s from %s", self._weights.version, self.path)
        except (WeightsFileError, OSError) as exc:
            log.error("rejected scoring weights file %s: %s (keeping %s)", self.path, exc, self._weights.version)
        return self._weights

    def current(self) -> ScoringWeights:
        """Cheap: one stat() per call; reloads only when the file changed."""
        return self.reload()
