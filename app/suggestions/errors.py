"""Errors of the suggestions feature, in the app's error tree (mapped to HTTP in one place).

They wrap the library's typed errors so the problems of every attempt reach the client as data
(``details``), never only inside a human message.
"""

from __future__ import annotations

from app.errors import Conflict, UpstreamError, ValidationFailed


class SuggestionGenerationFailed(UpstreamError):
    """Every model attempt produced invalid options (and no conservative fallback was configured)."""

    code = "auto_reply_generation_failed"

    def __init__(self, suggestion_id: str, attempts: int, problems: list[list[str]]) -> None:
        super().__init__(
            f"no valid suggestions after {attempts} attempt(s)",
            details={"suggestionId": suggestion_id, "attempts": attempts, "problems": problems},
        )
        self.problems = problems


class SuggestionsStale(Conflict):
    """A newer user message arrived while generating: the result is never returned as current."""

    code = "suggestions_stale"

    def __init__(self, suggestion_id: str) -> None:
        super().__init__(
            "a newer user message arrived while the suggestions were generating; they were discarded",
            details={"suggestionId": suggestion_id},
        )


class AutoReplyDisabled(Conflict):
    code = "auto_reply_disabled"

    def __init__(self) -> None:
        super().__init__("auto-reply is disabled in this conversation's settings (autoReply.enabled)")


def anchor_not_agent_message(message_id: str) -> ValidationFailed:
    return ValidationFailed(
        f"message {message_id} is a user message; suggestions answer an agent message",
        code="anchor_not_agent_message", details={"messageId": message_id},
    )  # fmt: skip


def anchor_without_user_turn(message_id: str) -> ValidationFailed:
    return ValidationFailed(
        f"no user message precedes message {message_id}; there is no user turn to continue",
        code="anchor_without_user_turn", details={"messageId": message_id},
    )  # fmt: skip
