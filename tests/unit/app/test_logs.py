"""Issue 11: JSON log lines carry the turn's ids; third-party request logs stay quiet."""

from __future__ import annotations

import json
import logging

import pytest

from app.logs import configure_logging, log_context


@pytest.fixture
def restore_logging():
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    for handler in list(root.handlers):
        root.removeHandler(handler)
    for handler in handlers:
        root.addHandler(handler)
    root.setLevel(level)


def test_json_lines_carry_turn_and_conversation_ids(capsys, restore_logging) -> None:
    configure_logging("INFO", "json")
    with log_context(turnId="t1", conversationId="c1"):
        logging.getLogger("app.turns").warning("turn %s failed", "t1")
    logging.getLogger("app").info("outside")
    lines = [json.loads(line) for line in capsys.readouterr().err.splitlines()]
    assert lines[0]["turnId"] == "t1" and lines[0]["conversationId"] == "c1" and lines[0]["level"] == "WARNING"
    assert lines[0]["message"] == "turn t1 failed" and lines[0]["ts"].endswith("Z")
    assert "turnId" not in lines[1]


def test_text_format_stays_readable_and_third_party_info_is_quiet(capsys, restore_logging) -> None:
    configure_logging("INFO", "text")
    logging.getLogger("httpx").info('HTTP Request: POST http://x "HTTP/1.1 200 OK"')
    logging.getLogger("alembic.runtime.migration").info("Context impl SQLiteImpl.")
    with log_context(turnId="t9"):
        logging.getLogger("app.turns").info("reply saved")
    err = capsys.readouterr().err
    assert "HTTP Request" not in err and "Context impl" not in err
    assert "INFO app.turns: reply saved turnId=t9" in err
