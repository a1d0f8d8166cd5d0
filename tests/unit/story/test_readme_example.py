"""The README's standalone Story example runs as written, with the app and its frameworks blocked,
so it cannot rot: three turns through all six tools, committed and saved."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[3] / "README.md"
HEADING = "## Using the Story library on its own"
BLOCKED = ("app", "litestar", "sqlalchemy", "openai")


def example_code() -> str:
    text = README.read_text(encoding="utf-8")
    section = text.split(HEADING, 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"^```python\n(.*?)^```$", section, flags=re.DOTALL | re.MULTILINE)
    assert len(blocks) == 1, "the section holds exactly one Python example"
    return blocks[0]


def test_the_readme_story_example_runs_three_turns_through_all_six_tools_without_the_app():
    guard = "import sys\n" + "".join(f"sys.modules[{m!r}] = None\n" for m in BLOCKED)
    out = subprocess.run([sys.executable, "-c", guard + example_code()], capture_output=True, text=True,
                         timeout=60, cwd=README.parent)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    assert [ln.split(",")[0] for ln in lines[:3]] == [f"turn {i}: committed" for i in (1, 2, 3)]
    assert lines[-1].startswith("3 turns committed; model calls: ")
    purposes = set(lines[-1].split(": ", 1)[1].split(", "))
    assert purposes == {"story.prepare", "story.plan_cycle", "story.advance", "story.settle", "story.rebranch"}
    assert "next ['rebranch:sub']" in out.stdout  # the host ran the settle's next action
