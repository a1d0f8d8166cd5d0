"""What a generation spent: the attempt budget and the token usage, shared by the suggestion
generator, its line-by-line fill and write-for-me (impersonate)."""

from __future__ import annotations

from typing import Any

import msgspec

MAX_ATTEMPTS = 3


class SuggestionUsage(msgspec.Struct, frozen=True, rename="camel"):
    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    estimated: bool = False


def usage_of(u: Any) -> SuggestionUsage:
    """The host's usage (estimated by the host when the provider reported none)."""
    if u is None:
        return SuggestionUsage(estimated=True)  # a host that reports nothing: unknown, not zero
    i, o = int(getattr(u, "input_tokens", 0) or 0), int(getattr(u, "output_tokens", 0) or 0)
    return SuggestionUsage(i, o, i + o, bool(getattr(u, "estimated", False)))


def add_usage(a: SuggestionUsage, b: SuggestionUsage) -> SuggestionUsage:
    return SuggestionUsage(
        a.input_tokens + b.input_tokens, a.output_tokens + b.output_tokens,
        a.total_tokens + b.total_tokens, a.estimated or b.estimated,
    )
