"""The simulator (``simulator`` / ``sim`` from tests/integration/conftest.py), never a real model."""

import pytest

from app.llm.fakes import conftest_llm_guard


@pytest.fixture(autouse=True)
def _no_real_models():
    yield from conftest_llm_guard()
