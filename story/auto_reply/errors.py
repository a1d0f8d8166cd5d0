"""Typed errors of the auto-reply library.

They carry data (fields, problems per attempt) rather than HTTP meaning; the app maps each
``code`` to a status. No error here is ever turned into canned suggestions silently.
"""

from __future__ import annotations

from typing import Any


class AutoReplyError(Exception):
    code: str = "auto_reply_error"


class TemplateError(AutoReplyError):
    """A system-prompt template the generator cannot fill; the app treats it as a start-up error."""

    code = "auto_reply_template_invalid"

    def __init__(self, missing: list[str], unknown: list[str] | None = None) -> None:
        self.missing = list(missing)
        self.unknown = list(unknown or [])
        parts = []
        if self.missing:
            parts.append("missing " + ", ".join(self.missing))
        if self.unknown:
            parts.append("unknown variable(s) " + ", ".join(self.unknown))
        super().__init__("auto-reply system prompt template: " + "; ".join(parts))


class AutoReplyConfigInvalid(AutoReplyError, ValueError):
    """Out-of-range or malformed config fields, all of them at once.

    A ``ValueError`` on purpose: when the config is decoded by msgspec (also nested inside a
    larger settings Struct) it surfaces as a ``msgspec.ValidationError`` carrying this message
    and path, which the app already maps to 422; ``__cause__`` keeps this typed error.
    """

    code = "auto_reply_config_invalid"

    def __init__(self, problems: dict[str, str]) -> None:
        self.problems = dict(problems)
        super().__init__(
            "invalid auto-reply config: " + "; ".join(f"{k} {v}" for k, v in self.problems.items())
        )


class AutoReplyDisabled(AutoReplyError):
    """Generation was asked for while ``enabled`` is false: no model call is made."""

    code = "auto_reply_disabled"

    def __init__(self) -> None:
        super().__init__("auto-reply is disabled for this conversation")


class InvalidSuggestionInput(AutoReplyError):
    """The input cannot anchor a suggestion (e.g. empty saved anchor text, no language)."""

    code = "auto_reply_input_invalid"

    def __init__(self, problem: str) -> None:
        self.problem = problem
        super().__init__(f"auto-reply input invalid: {problem}")


class AutoReplyGenerationFailed(AutoReplyError):
    """Every attempt failed; carries the problems of each so the app can report them."""

    code = "auto_reply_generation_failed"

    def __init__(
        self,
        attempts: int,
        problems_per_attempt: list[list[str]],
        *,
        usage: Any = None,
        records: list[Any] | None = None,
        model: str | None = None,
    ) -> None:
        self.attempts = attempts
        self.problems_per_attempt = [list(p) for p in problems_per_attempt]
        self.usage = usage
        self.records = list(records or [])
        self.model = model
        summary = " | ".join(
            f"attempt {i}: " + "; ".join(p) for i, p in enumerate(self.problems_per_attempt, 1)
        )
        super().__init__(f"no valid suggestions after {attempts} attempt(s): {summary}")
