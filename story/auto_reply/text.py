"""Text helpers: list-marker stripping, comparison keys, scripts by language, token estimates.

Kept apart from validation so the conservative fallback and usage estimation share the exact
same notions of "same option" and "CJK character" as the checks.
"""

from __future__ import annotations

import difflib
import math
import re
import unicodedata
from collections.abc import Iterable

# "1." "1)" "1、" "1:" "(1)" "-" "*" "•" "①" ... at the start, only when clearly a marker
# ("1.5 hours" and "3:00" are kept: the marker must not be followed by a digit).
_MARKER = re.compile(
    r"""^\s*(?:
        [(\[（]\s*[0-9０-９]{1,2}\s*[)\]）]
      | [0-9０-９]{1,2}\s*[.)、:：．）](?![0-9０-９])
      | [-*+]\s
      | [•·●○◦▪▫‣⁃–—・]
      | [\u2460-\u2473\u2474-\u2487\u2488-\u249b\u2776-\u277f\u2780-\u2793]
    )\s*""",
    re.VERBOSE,
)


def strip_marker(text: str) -> str:
    """Drop one leading numbering/bullet marker and surrounding whitespace."""
    return _MARKER.sub("", text, count=1).strip()


def comparison_key(text: str) -> str:
    """Case-, width- (NFKC), whitespace- and punctuation/symbol-insensitive form of ``text``."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return "".join(ch for ch in folded if unicodedata.category(ch)[0] not in "PSZC")


def similarity(a: str, b: str, *, ignore: Iterable[str] = ()) -> float:
    """How much of two options is the same characters, 0..1: ``difflib``'s ratio (2·matched /
    total length) of their comparison keys, so case, width, spacing and punctuation never count.
    Words in ``ignore`` (the characters' names) are taken out of both first: addressing 守卫 or
    "Guard Captain Aldric" in two options does not make them one option.

    Character-level on purpose: it needs no tokenizer for Chinese, and the near-duplicates a small
    model writes are the same sentence with a character or a word changed, added or dropped. Why
    this and not a character-bigram Jaccard, and the threshold the check uses, are in
    ``validate.NEAR_DUPLICATE_RATIO``.
    """
    drop = sorted({k for k in map(comparison_key, ignore) if k}, key=len, reverse=True)
    ka, kb = comparison_key(a), comparison_key(b)
    for word in drop:
        ka, kb = ka.replace(word, ""), kb.replace(word, "")
    if not ka or not kb:
        return 1.0 if ka == kb else 0.0
    return difflib.SequenceMatcher(None, ka, kb, autojunk=False).ratio()


# One negation more or less turns "I want to try" into its refusal: two options, not one. Words
# that only contain a negation character (特别 "especially", 不错 "not bad" = good, 未来 "future")
# are removed before counting.
_NEGATION_EN = re.compile(
    r"\b(?:not|no|never|nothing|nobody|none|neither|nor|cannot"
    r"|(?:do|does|did|is|are|was|were|ca|wo|could|would|should|have|has|had|must|need|might|ai)n'?t)\b",
    re.IGNORECASE,
)
_NOT_NEGATION_ZH = re.compile(r"特别|别人|区别|分别|告别|离别|级别|类别|个别|性别|不过|不错|不少|不久|不断|未来")
_NEGATION_ZH = re.compile(r"[不没別别未]")
_NEGATION_JA = re.compile(r"ない|ません|なかった")


def negations(text: str) -> int:
    """How many negation words or characters ``text`` has (en, zh, ja; others count none)."""
    folded = unicodedata.normalize("NFKC", text).replace("\u2019", "'")
    zh = _NOT_NEGATION_ZH.sub("", folded)
    return len(_NEGATION_EN.findall(folded)) + len(_NEGATION_ZH.findall(zh)) + len(_NEGATION_JA.findall(folded))


def is_han(ch: str) -> bool:
    o = ord(ch)
    return (
        0x4E00 <= o <= 0x9FFF or 0x3400 <= o <= 0x4DBF or 0x20000 <= o <= 0x2EBEF
        or 0xF900 <= o <= 0xFAFF or 0x3005 <= o <= 0x3007
    )


def is_kana(ch: str) -> bool:
    o = ord(ch)
    return 0x3041 <= o <= 0x309F or 0x30A0 <= o <= 0x30FF or 0x31F0 <= o <= 0x31FF or 0xFF66 <= o <= 0xFF9D


def is_hangul(ch: str) -> bool:
    o = ord(ch)
    return 0xAC00 <= o <= 0xD7AF or 0x1100 <= o <= 0x11FF or 0x3130 <= o <= 0x318F or 0xA960 <= o <= 0xA97F


def is_cjk(ch: str) -> bool:
    return is_han(ch) or is_kana(ch) or is_hangul(ch)


def is_latin_letter(ch: str) -> bool:
    return ch.isalpha() and unicodedata.name(ch, "").startswith("LATIN")


LATIN_LANGUAGES = frozenset(
    "af az ca cs cy da de en eo es et eu fi fil fo fr fy ga gd gl ha haw hr ht hu id ig is it jv "
    "ku la lb lt lv mg mi ms mt nb nl nn no ny om pl pt qu rm ro rw sk sl sm sn so sq sv sw tl tr "
    "tk uz vi wo xh yo zu".split()
)
_SCRIPT_SUBTAGS = {"latn": "latin", "hans": "han", "hant": "han", "hani": "han", "jpan": "kana",
                   "hira": "kana", "kana": "kana", "kore": "hangul", "hang": "hangul"}
_PRIMARY_SCRIPT = {"zh": "han", "yue": "han", "cmn": "han", "wuu": "han", "ja": "kana", "ko": "hangul"}


def primary_language(tag: str) -> str:
    return tag.strip().replace("_", "-").split("-", 1)[0].lower()


CHINESE_LANGUAGES = frozenset({"zh", "cmn", "yue", "wuu"})


def is_chinese(tag: str) -> bool:
    return primary_language(tag) in CHINESE_LANGUAGES


def expected_script(tag: str) -> str | None:
    """'han' | 'kana' | 'hangul' | 'latin', or None when the script is not checked."""
    parts = tag.strip().replace("_", "-").lower().split("-")
    for sub in parts[1:]:
        if len(sub) == 4 and sub in _SCRIPT_SUBTAGS:
            return _SCRIPT_SUBTAGS[sub]
    primary = parts[0]
    if primary in _PRIMARY_SCRIPT:
        return _PRIMARY_SCRIPT[primary]
    return "latin" if primary in LATIN_LANGUAGES else None


_STRAY_ENGLISH = re.compile(
    r"(?<=[\u3400-\u9fff，。！？、])\s?(me|you|him|her|us|them|my|your|the|and|to|of|is|are|with|for|it)\s?"
    r"(?=[\u3400-\u9fff])",
    re.IGNORECASE,
)
"""An English function word between Chinese characters: Qwen2.5-0.5B saved "请随时与 me交流您的看法或建议。"
twice in one run. Names, brands and loanwords ("AI", "KTV", "app") are not on the list."""


def script_problem(text: str, script: str | None) -> str | None:
    """Why ``text`` is not written in ``script``, or None. Latin needs ≥ 70% Latin letters; Chinese
    needs Han characters and no English function word inside a Chinese sentence."""
    if script == "han" and not any(is_han(c) for c in text):
        return "no Chinese (Han) characters"
    if script == "han" and (stray := _STRAY_ENGLISH.search(text)):
        return f"an English word inside Chinese ('{stray.group(1)}')"
    if script == "kana" and not any(is_kana(c) for c in text):
        return "no Japanese kana"
    if script == "hangul" and not any(is_hangul(c) for c in text):
        return "no Korean Hangul"
    if script == "latin":
        letters = [c for c in text if c.isalpha()]
        if not letters:
            return "no letters"
        latin = sum(1 for c in letters if is_latin_letter(c))
        if latin / len(letters) < 0.7:
            return f"mostly non-Latin letters ({latin}/{len(letters)} Latin)"
    return None


def estimate_tokens(text: str) -> int:
    """Rough count when the provider reports none: CJK ≈ 1 token/char, else ≈ 4 chars/token."""
    cjk = sum(1 for c in text if is_cjk(c))
    return cjk + math.ceil((len(text) - cjk) / 4)


LANGUAGE_NAMES = {
    "zh": "Chinese", "en": "English", "ja": "Japanese", "ko": "Korean", "fr": "French",
    "de": "German", "es": "Spanish", "pt": "Portuguese", "it": "Italian", "ru": "Russian",
    "vi": "Vietnamese", "id": "Indonesian", "th": "Thai", "ar": "Arabic", "tr": "Turkish",
    "nl": "Dutch", "pl": "Polish", "uk": "Ukrainian", "hi": "Hindi", "yue": "Cantonese",
}


def language_label(tag: str) -> str:
    """'Chinese (zh-CN)' for the prompt; the bare tag when the language is not in the table."""
    name = LANGUAGE_NAMES.get(primary_language(tag))
    return f"{name} ({tag.strip()})" if name else tag.strip()
