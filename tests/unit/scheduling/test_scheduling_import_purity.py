import subprocess
import sys
import textwrap


def test_scheduling_imports_with_app_and_io_frameworks_blocked():
    code = textwrap.dedent(
        """
        import sys
        for name in ("litestar", "sqlalchemy", "openai", "app", "httpx", "asyncpg", "aiosqlite"):
            sys.modules[name] = None
        import scheduling, scheduling.emotion, scheduling.intent, scheduling.selection
        emotion = scheduling.fallback_emotion("好难过")
        assert emotion.needs_comfort
        leaked = [m for m in sys.modules if m.split(".")[0] in ("litestar", "sqlalchemy", "openai", "app")
                  and sys.modules[m] is not None]
        assert not leaked, leaked
        """
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
