"""ASGI entry point for external servers: ``uvicorn --factory app.asgi:create``."""

from __future__ import annotations

from litestar import Litestar

from app.main import create_app
from app.settings import load_settings


def create() -> Litestar:
    return create_app(load_settings())
