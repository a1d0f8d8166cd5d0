"""A model's needs that do not say which need: read again from its emotion and the message.

The scorer routes on the three need flags (comfort, advice, de-escalation). Qwen2.5-Coder-0.5B
answered the emotion stage with all three true, or all three false, on every one of the 18
labelled lines of ``tests/realmodel/group.py``, whatever the line: a sad, an angry and a "help me
compare two offers" line got the same needs, and the scorer sent them all to one member. Flags
that are all equal tell the scorer nothing about which member fits, so ``settle_needs`` reads
them again: the seed's fallback rules on the model's own primary emotion (comfort for a sad,
lonely, anxious, stressed or angry user, de-escalation for an angry one, advice for a confused
one), joined with what the offline detector finds in the message itself ("帮我分析" asks for
advice). A reading whose flags differ is the model's judgement and is kept as given.
"""

from __future__ import annotations

import msgspec

from scheduling.emotion.fallback import fallback_emotion, needs_of_emotion
from scheduling.emotion.model import REASON_MAX_CHARS, UserEmotion

SETTLED_NOTE = "needs re-read from the emotion and the message (the model marked all or none)"


def settle_needs(emotion: UserEmotion, text: str) -> UserEmotion:
    """``emotion`` with its needs re-read when the three flags are all equal (see the module)."""
    if len({emotion.needs_comfort, emotion.needs_advice, emotion.needs_deescalation}) > 1:
        return emotion
    cues, (comfort, advice, calm) = fallback_emotion(text), needs_of_emotion(emotion.primary_emotion)
    comfort, advice, calm = comfort or cues.needs_comfort, advice or cues.needs_advice, calm or cues.needs_deescalation
    if (comfort, advice, calm) == (emotion.needs_comfort, emotion.needs_advice, emotion.needs_deescalation):
        return emotion
    reason = f"{emotion.reason.strip()} [{SETTLED_NOTE}]".strip()
    return msgspec.structs.replace(emotion, needs_comfort=comfort, needs_advice=advice, needs_deescalation=calm,
                                   reason=reason[:REASON_MAX_CHARS])  # fmt: skip
