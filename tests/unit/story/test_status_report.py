import subprocess
import sys

import msgspec
from msgspec.structs import replace

from story.coordinator.envelope import EventRecord, EvidenceRef, QuarantineRecord, StoryState
from story.coordinator.report import status_report
from tests.unit.story.builders import goal, narrative, world


def _state() -> StoryState:
    n = narrative([goal("g0"), replace(goal("g1"), done=True), goal("g2", serves="sub", prereq=["g0"])])
    q = QuarantineRecord("ev-old", "3 settle attempts", [3, 5, 7], [EvidenceRef("a1", "h", "u", 2)])
    return StoryState("lia", world(), n, status="waiting_for_acceptance", events=[EventRecord("ev-key", closed=True)],
                      quarantine=[q])


def test_report_shows_scene_lines_open_goals_and_quarantine():
    r = status_report(_state())
    assert (r.status, r.foreground.id, r.foreground.phase) == ("waiting_for_acceptance", "ev-key", "start")
    assert [g.id for g in r.pending_goals] == ["g0", "g2"] and r.pending_goals[1].prerequisites == ["g0"]
    assert r.unresolved_events == ["ev-key"] and r.quarantine[0].message_ids == ["a1"]


def test_report_never_contains_hidden_threads_seeds_or_dice_state():
    text = msgspec.json.encode(status_report(_state())).decode()
    for hidden in ("uc-guild", "Ash Guild", "seed-caravan", "rngState", "rng_state", "hooded watcher"):
        assert hidden not in text
    assert '"pendingGoals"' in text  # camelCase on the wire


def test_report_module_imports_without_app_libraries():
    code = ("import sys\nfor m in ('litestar','sqlalchemy','openai','app'): sys.modules[m] = None\n"
            "import story.coordinator.report\nprint('ok')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=".")
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr
