"""Read a decisions CSV (``analytics.export``) into arrays for a conditional choice model.

Each turn is one choice among its candidates. Turns are dropped when they carry no evidence
about the scorer: a candidate was mentioned (mentions override scoring), one candidate only,
or every candidate was chosen. With ``label="llm"`` only turns the LLM decided are used.
Problems are ``DecisionsFileError`` naming the file line (the header is line 1).
"""

from __future__ import annotations

import csv
import math
from array import array
from pathlib import Path

import msgspec
import numpy as np

from analytics.export import DECISION_COLUMNS
from scheduling.selection.features import FEATURE_NAMES

LABELS = ("selected", "llm")
FLAGS = {"1": True, "0": False, "true": True, "false": False}


class DecisionsFileError(ValueError):
    def __init__(self, path: str | Path, line: int | None, problem: str) -> None:
        where = f"{path}, line {line}" if line else str(path)
        super().__init__(f"{where}: {problem}")
        self.path, self.line, self.problem = str(path), line, problem


class ChoiceData(msgspec.Struct):
    """Rows sorted by turn: ``starts[t]`` is the first row of turn ``t``."""

    x: np.ndarray
    positive: np.ndarray
    turn: np.ndarray
    starts: np.ndarray
    groups: np.ndarray
    rows_read: int
    excluded: dict[str, int]

    @property
    def turns(self) -> int:
        return len(self.starts)

    def subset(self, turn_mask: np.ndarray) -> ChoiceData:
        keep = turn_mask[self.turn]
        renumber = np.cumsum(turn_mask) - 1
        turn = renumber[self.turn[keep]]
        starts = np.flatnonzero(np.r_[True, turn[1:] != turn[:-1]]) if len(turn) else np.zeros(0, dtype=int)
        return ChoiceData(self.x[keep], self.positive[keep], turn, starts, self.groups[turn_mask], self.rows_read, self.excluded)


def _flag(path: Path, line: int, column: str, text: str, *, empty_ok: bool = False) -> bool | None:
    value = text.strip().lower()
    if value == "" and empty_ok:
        return None
    if value not in FLAGS:
        raise DecisionsFileError(path, line, f"column {column} must be 1 or 0{' or empty' if empty_ok else ''}, got {text!r}")
    return FLAGS[value]


def _number(path: Path, line: int, column: str, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise DecisionsFileError(path, line, f"column {column} is not a number: {text!r}") from None
    if not math.isfinite(value):
        raise DecisionsFileError(path, line, f"column {column} is not a finite number: {text!r}")
    return value


def load_decisions(path: str | Path, label: str = "selected") -> ChoiceData:
    """Stream the file once into flat arrays (1M rows fit in a few tens of MB), then check and
    group turns with numpy."""
    if label not in LABELS:
        raise ValueError(f"label must be one of {', '.join(LABELS)}")
    path = Path(path)
    feats, chosen, llm, tix, lines = array("d"), array("b"), array("b"), array("q"), array("q")
    turn_ids: dict[str, int] = {}
    first_line: list[int] = []
    conversations: list[str] = []
    try:
        handle = path.open(newline="", encoding="utf-8")
    except OSError as exc:
        raise DecisionsFileError(path, None, f"cannot be read ({exc.strerror or exc})") from None
    with handle:
        reader = csv.reader(handle)
        header = next(reader, None)
        if header is None:
            raise DecisionsFileError(path, 1, "file is empty (expected a header row)")
        missing = [c for c in DECISION_COLUMNS if c not in header]
        if missing:
            raise DecisionsFileError(path, 1, "missing column(s): " + ", ".join(missing))
        fcols = [(f, header.index(f)) for f in FEATURE_NAMES]
        c_turn, c_conv = header.index("turn_id"), header.index("conversation_id")
        c_sel, c_llm = header.index("selected"), header.index("llm_selected")
        for line, cells in enumerate(reader, start=2):
            if not cells:
                continue
            if len(cells) != len(header):
                raise DecisionsFileError(path, line, f"expected {len(header)} values, got {len(cells)}")
            feats.extend([_number(path, line, f, cells[i]) for f, i in fcols])
            chosen.append(_flag(path, line, "selected", cells[c_sel]))
            flag = _flag(path, line, "llm_selected", cells[c_llm], empty_ok=True)
            llm.append(-1 if flag is None else int(flag))
            t = turn_ids.setdefault(cells[c_turn], len(turn_ids))
            if t == len(first_line):
                first_line.append(line)
                conversations.append(cells[c_conv])
            tix.append(t)
            lines.append(line)
    if not tix:
        raise DecisionsFileError(path, None, "no data rows")
    return _to_arrays(path, list(turn_ids), first_line, conversations, label,
                      np.frombuffer(feats, dtype=np.float64).reshape(-1, len(FEATURE_NAMES)),
                      np.frombuffer(chosen, dtype=np.int8), np.frombuffer(llm, dtype=np.int8),
                      np.frombuffer(tix, dtype=np.int64))


def _first_bad(path: Path, bad: np.ndarray, first_line: list[int], turn_ids: list[str], problem: str) -> None:
    if bad.any():
        t = int(np.flatnonzero(bad)[0])
        raise DecisionsFileError(path, first_line[t], f"turn {turn_ids[t]} {problem}")


def _to_arrays(path: Path, turn_ids: list[str], first_line: list[int], conversations: list[str], label: str,
               x: np.ndarray, chosen: np.ndarray, llm: np.ndarray, tix: np.ndarray) -> ChoiceData:
    n_turns = len(turn_ids)
    count = np.bincount(tix, minlength=n_turns)
    empty = np.bincount(tix, weights=(llm < 0), minlength=n_turns)
    mentioned = np.bincount(tix, weights=x[:, FEATURE_NAMES.index("mentioned")] > 0, minlength=n_turns) > 0
    positive = (llm == 1) if label == "llm" else (chosen == 1)
    pos_count = np.bincount(tix, weights=positive, minlength=n_turns)
    usable = np.ones(n_turns, dtype=bool)
    if label == "llm":
        _first_bad(path, (empty > 0) & (empty < count), first_line, turn_ids, "has llm_selected empty on some candidates only")
        usable &= empty == 0
    _first_bad(path, usable & ~mentioned & (pos_count == 0), first_line, turn_ids,
               f"has no {'LLM-selected' if label == 'llm' else 'selected'} candidate")
    excluded = {
        "llm_did_not_decide": int((empty == count).sum()) if label == "llm" else 0,
        "mentioned": int((usable & mentioned).sum()),
        "single_candidate": int((usable & ~mentioned & (count < 2)).sum()),
        "all_chosen": int((usable & ~mentioned & (count >= 2) & (pos_count == count)).sum()),
    }
    usable &= ~mentioned & (count >= 2) & (pos_count < count)
    if not usable.any():
        raise DecisionsFileError(path, None, f"no usable turns for label {label!r} (excluded: {excluded})")
    order = np.argsort(tix, kind="stable")
    keep = order[usable[tix[order]]]
    renumber = np.cumsum(usable) - 1
    turn = renumber[tix[keep]]
    starts = np.flatnonzero(np.r_[True, turn[1:] != turn[:-1]])
    return ChoiceData(x[keep], positive[keep], turn, starts, np.asarray(conversations)[usable], len(tix), excluded)
