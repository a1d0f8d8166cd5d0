"""Start the provisioned ``llama-server`` on loopback with JSON-schema-constrained output."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from tests.realmodel import provision

# Two slots share the context, so intent and emotion run side by side; 4096 tokens per slot is
# what the model was tuned for and more than any stage's prompt plus its token budget.
SLOTS = 2
CONTEXT_PER_SLOT = 4096
MODELS = {"smollm2": provision.provision_model, "qwen": provision.provision_qwen}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def llama_server(startup_s: float = 60.0, *, model_name: str = "smollm2") -> Iterator[str]:
    """Provision (first run builds, later runs reuse the cache), start, yield the ``/v1`` base URL.
    ``model_name``: ``smollm2`` (SmolLM2-135M, English) or ``qwen`` (Qwen2.5-Coder-0.5B, zh and en)."""
    provision.cache_dir().mkdir(parents=True, exist_ok=True)
    if model_name not in MODELS:
        raise ValueError(f"unknown model {model_name!r}; known: {', '.join(MODELS)}")
    model = MODELS[model_name]()
    binary = provision.provision_server()
    port = _free_port()
    threads = str(max(1, min(4, os.cpu_count() or 2)))
    log = tempfile.NamedTemporaryFile(prefix="llama-server-", suffix=".log", delete=False)
    proc = subprocess.Popen(
        [str(binary), "-m", str(model), "--host", "127.0.0.1", "--port", str(port), "-c", str(SLOTS * CONTEXT_PER_SLOT),
         "-np", str(SLOTS), "-t", threads, "--no-webui", "--seed", "7"],
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + startup_s
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"llama-server exited with {proc.returncode}: {Path(log.name).read_text()[-2000:]}")
            with contextlib.suppress(OSError):
                with urllib.request.urlopen(base + "/health", timeout=2) as r:
                    if r.status == 200:
                        break
            if time.time() > deadline:
                raise RuntimeError(f"llama-server not healthy after {startup_s} s")
            time.sleep(0.3)
        yield base + "/v1"
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
        os.unlink(log.name)
