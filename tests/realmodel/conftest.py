"""Real-model conformance: the app against upstream llama.cpp ``llama-server`` (SmolLM2-135M).

A tiny model writes poor prose; what this proves is the wire: request parameters the server
accepts, schemas it compiles into grammars, answers that decode on the model path, missing usage
fields. The server and model are provisioned into a cache outside the clone (``provision.py``).
"""

from __future__ import annotations

import contextlib

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from litestar.testing import AsyncTestClient

from app.llm.fakes import conftest_llm_guard
from app.main import create_app
from tests.integration.conftest import Api, make_settings
from tests.realmodel.server import llama_server

# A 135M model on two CPU cores: generous per-call time, token budgets from each schema.
CALL_TIMEOUT_MS = "120000"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/realmodel" in str(item.fspath):
            item.add_marker(pytest.mark.realmodel)


@pytest.fixture(autouse=True)
def _no_real_models() -> Iterator[None]:
    yield from conftest_llm_guard()


@pytest.fixture(scope="session")
def llama_base_url() -> Iterator[str]:
    with llama_server() as base:
        yield base


# Replies are prose: a short budget keeps a tiny model from looping into a degenerate reply (which
# the quality check would rightly drop) and keeps the suite fast. Structured stages size their own.
ACTOR_MAX_TOKENS = 80


@contextlib.asynccontextmanager
async def _api(db_url: str, tmp_path: Path, base_url: str, model: str, actor_max_tokens: int) -> AsyncIterator[Api]:
    """The app on ``db_url`` against ``base_url``, with the actor on its own prose budget."""
    config = tmp_path / "companion.toml"
    config.write_text(
        f'[llm.models.prose]\nbaseUrl = "{base_url}"\nmodel = "{model}"\ntimeoutMs = {CALL_TIMEOUT_MS}\n'
        f'maxTokens = {actor_max_tokens}\n\n[llm.stages]\nactor = "prose"\n'
    )
    settings = make_settings(db_url, tmp_path, COMPANION_LLM_BASE_URL=base_url, COMPANION_LLM_MODEL=model,
                             COMPANION_LLM_TIMEOUT_MS=CALL_TIMEOUT_MS, COMPANION_TURN_TIMEOUT_S="600",
                             COMPANION_CONFIG=str(config))  # fmt: skip
    async with AsyncTestClient(create_app(settings), timeout=900) as client:
        yield Api(client, settings)


@pytest.fixture
async def real_api(db_url: str, tmp_path: Path, llama_base_url: str) -> AsyncIterator[Api]:
    async with _api(db_url, tmp_path, llama_base_url, "smollm2", ACTOR_MAX_TOKENS) as api:
        yield api


@pytest.fixture(scope="session")
def qwen_base_url() -> Iterator[str]:
    with llama_server(model_name="qwen") as base:
        yield base


# Qwen2.5-Coder-0.5B on two cores: about 115 prompt and 26 generated tokens per second.
QWEN_ACTOR_MAX_TOKENS = 120


@pytest.fixture
async def qwen_api(db_url: str, tmp_path: Path, qwen_base_url: str) -> AsyncIterator[Api]:
    async with _api(db_url, tmp_path, qwen_base_url, "qwen", QWEN_ACTOR_MAX_TOKENS) as api:
        yield api
