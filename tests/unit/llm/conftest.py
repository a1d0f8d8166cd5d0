"""Unit tests of the LLM gateway run with real-model calls blocked."""

import pytest

from app.llm.fakes import conftest_llm_guard


@pytest.fixture(autouse=True)
def _no_real_models():
    yield from conftest_llm_guard()
