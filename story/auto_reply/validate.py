"""Strict checks of the model's answer.

Every problem is named precisely (``option 2: over length (212 > 160 chars)``) because the
names are sent back to the model in the repair turn and reported to the app on failure. An
over-length option is invalid, never truncated: a cut sentence is not what the model meant.
Decoding is not done here: the host's structured path decodes ``SuggestionOptions`` (tolerating a
Markdown code fence) and runs these checks on the decoded value.
"""

from __future__ import annotations

import re
from typing import Iterable

import msgspec

from .text import comparison_key, expected_script, script_problem, strip_marker
from .voice import voice_problems

# a copied stretch of the anchor shorter than this is coincidence, not a copy
MIN_COPY_KEY_CHARS = 20


class Checked(msgspec.Struct, frozen=True):
    options: list[str]  # cleaned (markers stripped, trimmed); only meaningful when ok
    problems: list[str]

    @property
    def ok(self) -> bool:
        return not self.problems


def check_options(
    raw: list[str],
    *,
    count: int,
    max_chars: int,
    language: str,
    speaker_names: Iterable[str],
    anchor_text: str,
) -> Checked:
    problems: list[str] = []
    if len(raw) != count:
        problems.append(f"expected exactly {count} options, got {len(raw)}")
    script = expected_script(language)
    names = list(speaker_names)
    prefixes = _speaker_prefixes(names)
    anchor_key = comparison_key(anchor_text)
    seen: dict[str, int] = {}
    cleaned: list[str] = []
    for n, item in enumerate(raw, 1):
        text = strip_marker(item)
        cleaned.append(text)
        if not text:
            problems.append(f"option {n}: empty")
            continue
        if len(text) > max_chars:
            problems.append(f"option {n}: over length ({len(text)} > {max_chars} chars)")
        wrong = script_problem(text, script)
        if wrong:
            problems.append(f"option {n}: wrong script for language {language} ({wrong})")
        spoken = next((name for name, rx in prefixes if rx.match(text)), None)
        if spoken:
            problems.append(f'option {n}: written as a line spoken by "{spoken}" (remove the "{spoken}:" prefix; write what the user says)')
        problems += [f"option {n}: {p}" for p in voice_problems(text, names, anchor_text)]
        key = comparison_key(text)
        if key and anchor_key and (key == anchor_key or (len(key) >= MIN_COPY_KEY_CHARS and key in anchor_key)):
            problems.append(f"option {n}: copies the character's message")
        if not key:
            problems.append(f"option {n}: no words (only punctuation or symbols)")
        elif key in seen:
            problems.append(f"option {n}: duplicate of option {seen[key]} (same words ignoring case, width, spacing and punctuation)")
        else:
            seen[key] = n
    return Checked(options=cleaned, problems=problems)


def _speaker_prefixes(names: Iterable[str]) -> list[tuple[str, re.Pattern[str]]]:
    out = []
    for name in dict.fromkeys(n.strip() for n in names if n and n.strip()):
        rx = re.compile(r"^[\"'“「『*\s]*" + re.escape(name) + r"[\"'”」』*\s]*[:：]", re.IGNORECASE)
        out.append((name, rx))
    return out
