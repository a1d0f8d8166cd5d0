import json

import pytest

from scheduling import DEFAULT_WEIGHTS, FEATURE_NAMES, WeightsFileError, load_weights


def write(tmp_path, payload):
    path = tmp_path / "weights.json"
    path.write_text(payload if isinstance(payload, str) else json.dumps(payload), encoding="utf-8")
    return path


def test_default_weights_are_the_seed_numbers():
    assert DEFAULT_WEIGHTS.version == "seed-v0"
    assert [DEFAULT_WEIGHTS.weights[f] for f in FEATURE_NAMES[:7]] == [1.6, 1.8, -0.45, -0.9, 2.4, 2.1, 2.2]
    assert set(DEFAULT_WEIGHTS.weights) == set(FEATURE_NAMES)


def test_a_tuned_file_with_metadata_loads(tmp_path):
    payload = {"version": "tuned-2026-11", "weights": {f: 1 for f in FEATURE_NAMES}, "createdAt": "2026-11-29T00:00:00Z",
               "metrics": {"auc": 0.81}, "training": {"rows": 1200}, "notes": "extra keys are fine"}
    weights = load_weights(write(tmp_path, payload))
    assert weights.version == "tuned-2026-11" and weights.weights["mentioned"] == 1.0
    assert weights.metrics == {"auc": 0.81} and weights.created_at == "2026-11-29T00:00:00Z"


def test_default_weights_round_trip_through_a_file(tmp_path):
    import msgspec
    path = tmp_path / "w.json"
    path.write_bytes(msgspec.json.encode(DEFAULT_WEIGHTS))
    assert load_weights(path) == DEFAULT_WEIGHTS


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ({"version": "v", "weights": {f: 1 for f in FEATURE_NAMES[:-1]}}, "missing feature weight(s): mentioned"),
        ({"version": "v", "weights": {**{f: 1 for f in FEATURE_NAMES}, "charisma": 2}}, "unknown feature(s): charisma"),
        ({"version": "v", "weights": {**{f: 1 for f in FEATURE_NAMES}, "mentioned": "high"}},
         "weight for mentioned is not a number"),
        ({"version": "v", "weights": {**{f: 1 for f in FEATURE_NAMES}, "mentioned": True}},
         "weight for mentioned is not a number"),
        ({"weights": {f: 1 for f in FEATURE_NAMES}}, "wrong shape"),
        ([1, 2, 3], "wrong shape"),
        ("{not json", "is not valid JSON"),
        ({"version": " ", "weights": {f: 1 for f in FEATURE_NAMES}}, "version is empty"),
    ],
)
def test_bad_weights_files_raise_a_clear_error_naming_the_file(tmp_path, payload, message):
    path = write(tmp_path, payload)
    with pytest.raises(WeightsFileError) as info:
        load_weights(path)
    assert message in str(info.value) and str(path) in str(info.value)
    assert info.value.path == str(path)


def test_missing_weights_file_raises_a_clear_error(tmp_path):
    with pytest.raises(WeightsFileError, match="cannot be read"):
        load_weights(tmp_path / "nope.json")
