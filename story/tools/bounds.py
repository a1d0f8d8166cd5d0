"""Bounds of what a Story model may write: text lengths, list sizes and per-request id choices.

A schema-following model (OpenAI strict mode, a llama.cpp grammar, the simulator) writes exactly
what the schema allows, so everything the prompts ask for is in the schema too: every free text
has a ``maxLength`` (the same number the prompt states), every list a ``maxItems`` and every id
that must name something that exists an ``enum`` of the current ids, built per request.

Text limits are static and live in the schema only (``extra_json_schema``): they stop a
constrained model from looping, while a slightly longer text from a provider without schema
support is still accepted (the state's byte limit bounds what is kept). Ids are checked on decode
too (non-empty, short), since the rules compare them. Per-request bounds are constraint paths for
the host's one structured path (``story.ports.StructuredModel``), which turns the output Struct
into the wire schema.
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec

ID_CHARS = 32
TITLE_CHARS = 30
SUMMARY_CHARS = 120
CLUE_CHARS = 60  # clues and invitations: one short sentence
NAME_CHARS = 30  # owners: a person or group of the material
THEME_CHARS = 30
DIRECTION_CHARS = 100
EXPERIENCE_CHARS = 60
LABEL_CHARS = 20
GIST_CHARS = 120
REWARD_CHARS = 60
QUOTE_CHARS = 160  # evidence: an exact quote from the accepted text
NOTE_CHARS = 80
PURSUIT_CHARS = 40
CHOICE_CHARS = 80
EXPECT_CHARS = 30
CONTINUITY_CHARS = 160
RESULT_CHARS = 120

def _text(limit: int) -> msgspec.Meta:
    """A free text of at most ``limit`` characters in the schema the model is sent."""
    return msgspec.Meta(extra_json_schema={"maxLength": limit})


Id = Annotated[str, msgspec.Meta(min_length=1, max_length=ID_CHARS)]
Title = Annotated[str, _text(TITLE_CHARS)]
Summary = Annotated[str, _text(SUMMARY_CHARS)]
Clue = Annotated[str, _text(CLUE_CHARS)]
Name = Annotated[str, _text(NAME_CHARS)]
Theme = Annotated[str, _text(THEME_CHARS)]
Direction = Annotated[str, _text(DIRECTION_CHARS)]
Experience = Annotated[str, _text(EXPERIENCE_CHARS)]
Label = Annotated[str, _text(LABEL_CHARS)]
Gist = Annotated[str, _text(GIST_CHARS)]
Reward = Annotated[str, _text(REWARD_CHARS)]
Quote = Annotated[str, _text(QUOTE_CHARS)]
Note = Annotated[str, _text(NOTE_CHARS)]
Pursuit = Annotated[str, _text(PURSUIT_CHARS)]
ChoiceText = Annotated[str, _text(CHOICE_CHARS)]
Expect = Annotated[str, _text(EXPECT_CHARS)]
Continuity = Annotated[str, _text(CONTINUITY_CHARS)]
ResultText = Annotated[str, _text(RESULT_CHARS)]

Constraints = dict[str, dict[str, Any]]


def one_of(path: str, ids: list[str]) -> Constraints:
    """An id field (or a nullable one) that must name one of ``ids`` (non-empty)."""
    return {path: {"enum": list(dict.fromkeys(ids))}}


def ids_from(path: str, ids: list[str], most: int | None = None) -> Constraints:
    """A list of ids drawn from ``ids``: at most ``most`` (default all of them); none when empty."""
    ids = list(dict.fromkeys(ids))
    limit = len(ids) if most is None else min(most, len(ids))
    if not ids:
        return {path: {"maxItems": 0}}
    return {path: {"maxItems": limit}, f"{path}[]": {"enum": ids}}


def at_most(path: str, count: int, least: int = 0) -> Constraints:
    bounds: dict[str, Any] = {"maxItems": max(0, count)}
    if least:
        bounds["minItems"] = least
    return {path: bounds}


def merge(*parts: Constraints) -> Constraints:
    out: Constraints = {}
    for part in parts:
        for path, extra in part.items():
            out.setdefault(path, {}).update(extra)
    return out
