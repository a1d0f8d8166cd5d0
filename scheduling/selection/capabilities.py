"""What each agent is good at: structured tags when set, persona keywords otherwise.

The keyword lists are the seed's (``scoreAgentForFallbackSelection``) with English
equivalents, plus a playful list for the seed's "lively, fun agent" principle. A keyword hit
counts as full capability (1.0): the seed's rule is a yes/no match.
"""

from __future__ import annotations

from scheduling.keywords import Cues
from scheduling.profiles import AgentProfile

CAPABILITIES = ("comfort", "analysis", "deescalation", "playful")

PERSONA_CUES: dict[str, Cues] = {
    "comfort": Cues(
        "温柔|陪伴|情绪|安慰|稳定|倾听|治愈|共情",
        "gentle|warm|caring|kind|listen(?:s|er|ing)?|empath[a-z]*|comfort[a-z]*|support(?:ive)?|soothing|"
        "companion[a-z]*|tender|healing",
    ),
    "analysis": Cues(
        "理性|分析|建议|计划|复盘|清醒|判断|策略",
        "rational|analy[a-z]*|logical|advice|advis[a-z]*|plan(?:s|ner|ning)?|strateg[a-z]*|practical|"
        "pragmatic|clear-headed|level-headed|judg[a-z]*",
    ),
    "deescalation": Cues(
        "克制|边界|冷静|稳定|成熟|安全",
        "calm|composed|boundar[a-z]*|mature|steady|stable|restrained|patient|grounded|safe|measured",
    ),
    "playful": Cues(
        "活泼|有趣|幽默|搞笑|俏皮|开朗|玩笑|逗",
        "playful|fun|funny|humou?r(?:ous)?|witty|cheerful|lively|jok[a-z]*|silly|bubbly|mischievous",
    ),
}


# A keyword hit on an agent whose author set tags: the tags say what it is for, and a word in
# its persona is weaker evidence. At full strength, "a calm analyst" (tagged analysis 0.95) would
# outrank the member tagged de-escalation 0.95 for an angry user, on the word "calm" alone.
KEYWORD_BESIDE_TAGS = 0.5


def agent_capabilities(agent: AgentProfile) -> dict[str, float]:
    """Capability per name in ``CAPABILITIES``, 0..1. A tag that is set wins over keywords,
    tag by tag, so an agent can be tagged for comfort only and keep keyword matching for the rest;
    beside tags, a keyword hit counts ``KEYWORD_BESIDE_TAGS`` (untagged agents: 1.0, the seed's rule)."""
    text = agent.persona_text()
    tags = agent.capabilities
    set_tags = {name: getattr(tags, name) for name in CAPABILITIES if tags is not None and getattr(tags, name) is not None}
    hit = KEYWORD_BESIDE_TAGS if set_tags else 1.0
    return {name: min(1.0, max(0.0, float(set_tags[name]))) if name in set_tags
            else (hit if PERSONA_CUES[name].search(text) else 0.0)
            for name in CAPABILITIES}  # fmt: skip
