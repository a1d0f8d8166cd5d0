"""A rewind's Story side (issue 27): every agent's state goes back to what it was at the message
the conversation was rewound to.

Each state write keeps a checkpoint stamped with the conversation's ``last_seq`` then
(``repository.compare_and_swap``). A rewind to a message at seq ``s`` restores, per agent, the
newest checkpoint stamped at or before ``s``: that state has seen nothing the rewind removed, so
the next turn continues from it exactly as if the removed turns had never happened (a reply it was
still waiting to adopt and that the rewind removed is then a deleted reply, as the seed says).
Where there is none, the seed's rule for changed history applies: the state starts over and the
next turn initialises from the history that is left; the report says which happened and why. The
state each agent had is kept for an admin (a ``reset`` record in the quarantine listing).
"""

from __future__ import annotations

import base64
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import new_id, utcnow
from app.story import repository


async def rewind_stories(session: AsyncSession, conversation_id: str, *, to_message_id: str, to_seq: int,
                         by: str) -> list[dict[str, Any]]:  # fmt: skip
    """In the caller's transaction (the rewind's); one report entry per agent with a Story."""
    report = []
    for state in await repository.states_of(session, conversation_id):
        if state.envelope is None and state.status in ("empty", "reset"):
            continue  # nothing was written yet: nothing to take back
        restore, pruned = await repository.checkpoint_at(session, state.id, to_seq)
        at, record_id = utcnow().isoformat(), new_id()
        if restore is not None:
            entry = {"agentId": state.agent_id, "action": "restored", "revision": restore.revision,
                     "atSeq": restore.at_seq, "status": restore.status}  # fmt: skip
        else:
            why = ("its checkpoint from then is no longer kept" if pruned
                   else "the Story had not started at that message")  # fmt: skip
            entry = {"agentId": state.agent_id, "action": "reinitialised", "reason": why}
        archived = {"kind": "rewind", "reason": f"rewound by {by} to message {to_message_id} (was {state.status})",
                    "previous_status": state.status, "previous_revision": state.revision, "reset_by": by, "at": at,
                    "last_outcome": state.last_outcome,
                    "envelope_b64": base64.b64encode(state.envelope).decode() if state.envelope is not None else None}
        outcome = {"kind": "rewind", "at": at, "by": by, "toMessageId": to_message_id, "previousStatus": state.status,
                   "previousRevision": state.revision, "archivedId": record_id, "toolCalls": [], **entry}
        await repository.rewind_state(session, state, to_seq, restore=restore, record_id=record_id,
                                      archived=archived, last_outcome=outcome)  # fmt: skip
        report.append({**entry, "archivedId": record_id})
    return report
