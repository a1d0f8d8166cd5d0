from __future__ import annotations

import json
import os

from app.turns.weights import WeightsStore
from scheduling import DEFAULT_WEIGHTS


def _write(path, version: str, **override: float) -> None:
    weights = {**DEFAULT_WEIGHTS.weights, **override}
    path.write_text(json.dumps({"version": version, "weights": weights}))


def test_weights_reload_when_the_file_changes(tmp_path) -> None:
    path = tmp_path / "w.json"
    _write(path, "v1")
    store = WeightsStore(path)
    assert store.current().version == "v1"
    _write(path, "v2-longer", comfort_match=3.0)
    os.utime(path, ns=(1, 10**18))
    assert store.current().version == "v2-longer"
    assert store.current().weights["comfort_match"] == 3.0


def test_a_bad_file_is_rejected_and_the_old_weights_stay(tmp_path, caplog) -> None:
    path = tmp_path / "w.json"
    _write(path, "good")
    store = WeightsStore(path)
    path.write_text('{"version": "bad", "weights": {"comfort_match": "lots"}}')
    os.utime(path, ns=(1, 10**18))
    assert store.current().version == "good"
    assert "rejected scoring weights file" in caplog.text


def test_no_file_means_the_seed_weights() -> None:
    assert WeightsStore(None).current().version == "seed-v0"
