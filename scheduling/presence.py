"""Presence: a member only knows the messages it witnessed.

Each saved message records the members present when it was saved (``GroupMessage.present``); a
muted member is present (it still listens), a member added later is not. A member's view of the
history is the slice it witnessed:

- ``history: "all"``: every member sees the whole conversation (a newcomer reads the backlog);
- ``history: "sinceJoin"``: a member sees a message when it was present at it. A message older
  than presence (``present`` is ``None``) counts as witnessed when it came after the member's
  ``joined_seq`` (members that were there before presence have ``joined_seq`` 0). Its own
  messages are always its own.

A member removed and added again sees what it witnessed before it left and what came after it came
back, never what was said while it was away. Direct chats never enter a group's slice: every
message belongs to one conversation.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Literal

import msgspec

from scheduling.profiles import GroupMessage

HistoryMode = Literal["all", "sinceJoin"]
DEFAULT_HISTORY: HistoryMode = "sinceJoin"


def was_present(agent_id: str, *, seq: int, author_id: str | None, present: Collection[str] | None,
                joined_seq: int = 0, mode: HistoryMode = DEFAULT_HISTORY) -> bool:  # fmt: skip
    """Whether ``agent_id`` witnessed the message at ``seq`` written by ``author_id`` (None: the user)."""
    if mode == "all" or author_id == agent_id:
        return True
    if present is not None:
        return agent_id in present
    return seq > joined_seq


def witnessed(messages: Sequence[GroupMessage], agent_id: str, *, joined_seq: int = 0,
              mode: HistoryMode = DEFAULT_HISTORY) -> list[GroupMessage]:  # fmt: skip
    """The messages ``agent_id`` witnessed, in the given order."""
    return [m for m in messages if was_present(agent_id, seq=m.seq, author_id=m.agent_id if m.role == "agent" else None,
                                               present=m.present, joined_seq=joined_seq, mode=mode)]  # fmt: skip


class Presence(msgspec.Struct, frozen=True, kw_only=True):
    """The conversation's history mode and each member's ``joined_seq`` (the conversation's last
    seq when it joined; 0 or absent: there from the start)."""

    mode: HistoryMode = DEFAULT_HISTORY
    joined: Mapping[str, int] = msgspec.field(default_factory=dict)

    def sees(self, agent_id: str, *, seq: int, author_id: str | None, present: Collection[str] | None) -> bool:
        return was_present(agent_id, seq=seq, author_id=author_id, present=present,
                           joined_seq=self.joined.get(agent_id, 0), mode=self.mode)  # fmt: skip

    def window(self, messages: Sequence[GroupMessage], agent_id: str) -> list[GroupMessage]:
        return witnessed(messages, agent_id, joined_seq=self.joined.get(agent_id, 0), mode=self.mode)

    def missed(self, messages: Sequence[GroupMessage], agent_id: str) -> int:
        """How many of ``messages`` the member did not witness."""
        return len(messages) - len(self.window(messages, agent_id))
