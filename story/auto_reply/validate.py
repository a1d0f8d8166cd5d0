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

from .text import comparison_key, expected_script, negations, script_problem, similarity, strip_marker
from .voice import voice_problems

# a copied stretch of the anchor shorter than this is coincidence, not a copy
MIN_COPY_KEY_CHARS = 20

NEAR_DUPLICATE_RATIO = 0.8
"""Two options whose ``text.similarity`` is at least this are one option written twice.

Measured on labelled pairs (``tests/unit/story/near_duplicate_cases.py``, zh and en): the same
sentence with a character or a word changed scored 0.85-0.97, different intentions 0.00-0.71
(我们一起去吃火锅吧 / 我们一起去爬山吧); 0.8 sits between. ``difflib``'s ratio rather than a
character-bigram Jaccard: one changed character in a short Chinese line breaks two bigrams, which
pushes real near-duplicates of eight characters down to the distinct range.
"""


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
        if (label := not_a_line(text, names)) is not None:
            problems.append(f"option {n}: {label}")
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
    problems += near_duplicate_problems(cleaned, names)
    return Checked(options=cleaned, problems=problems)


NEAR_DUPLICATE = "near-duplicate of option"


def near_duplicate_problems(options: list[str], names: Iterable[str] = ()) -> list[str]:
    """``option 3: near-duplicate of option 1 (82% the same characters…)``, once per later option.

    Exact duplicates (same comparison key) and options without words are named by their own rule
    and skipped here. A pair that differs by a negation (我想去 / 我不想去, "I want to" / "I don't
    want to") is two intentions, accept and decline, however few characters differ, and passes.
    """
    keys = [comparison_key(o) for o in options]
    names = list(names)
    out = []
    for j in range(1, len(options)):
        for i in range(j):
            if not keys[i] or not keys[j] or keys[i] == keys[j]:
                continue
            ratio = similarity(options[i], options[j], ignore=names)
            if ratio >= NEAR_DUPLICATE_RATIO and negations(options[i]) == negations(options[j]):
                out.append(
                    f"option {j + 1}: {NEAR_DUPLICATE} {i + 1} ({round(ratio * 100)}% the same characters; "
                    "each option needs its own intention, not a changed word)"
                )
                break
    return out


_IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+|[a-z]+(?:[A-Z][a-z0-9]*)+")
_BRACKETED = re.compile(r"[(（\[【][^)）\]】]*[)）\]】]")


def not_a_line(text: str, names: Iterable[str] = ()) -> str | None:
    """Why ``text`` is a label rather than something the user would send, if it is one: a field
    name (``needsAdvice``, ``addressed_user_name``) or a speaker's name with at most a bracketed
    note (``Joy (user)``). SmolLM2-135M offered all three as suggestions (issue 26's benchmark)."""
    stripped = text.strip().strip("\"'“”「」*")
    if _IDENTIFIER.fullmatch(stripped):
        return f"a field name, not a line ('{stripped}')"
    bare = _BRACKETED.sub("", stripped)
    rest = bare
    for name in sorted((n.strip() for n in names if n and n.strip()), key=len, reverse=True):
        rest = re.sub(re.escape(name), "", rest, flags=re.IGNORECASE)
    # A name called out ("Lia?", "林溪！") is the user's line; a name with a note, or alone, is a label.
    if rest != bare and not comparison_key(rest) and (bare != stripped or not rest.strip()):
        return f"only a name, not a line ('{stripped}')"
    return None


def _speaker_prefixes(names: Iterable[str]) -> list[tuple[str, re.Pattern[str]]]:
    out = []
    for name in dict.fromkeys(n.strip() for n in names if n and n.strip()):
        rx = re.compile(r"^[\"'“「『*\s]*" + re.escape(name) + r"[\"'”」』*\s]*[:：]", re.IGNORECASE)
        out.append((name, rx))
    return out
