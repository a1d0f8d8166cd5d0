"""scheduling/ and story/ are pure libraries: they import without Litestar, SQLAlchemy, openai or
the app (DESIGN.md dependency rule)."""

from __future__ import annotations

import subprocess
import sys

import pytest

BLOCKED = ["litestar", "sqlalchemy", "openai", "app", "alembic", "asyncpg", "aiosqlite"]


@pytest.mark.parametrize("package", ["scheduling", "story", "story.auto_reply"])
def test_library_imports_without_frameworks(package: str) -> None:
    code = (
        "import sys, pkgutil, importlib\n"
        f"for name in {BLOCKED!r}: sys.modules[name] = None\n"
        f"pkg = importlib.import_module({package!r})\n"
        "for info in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + '.'):\n"
        "    importlib.import_module(info.name)\n"
        "print('ok')\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().endswith("ok")
