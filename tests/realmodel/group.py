"""The four-member group the reply-quality checks are run on (a comforter, a planner, a joker, a
mediator), in Chinese and English, and lines with a clear expected first speaker.

Shared by ``tests/realmodel/test_realmodel_qwen.py`` and ``tests/perf/bench_reply_quality.py``.
"""

from __future__ import annotations

from typing import Any

ROLES = ("comforter", "planner", "joker", "mediator")
CAPABILITIES = {"comforter": {"comfort": 0.95}, "planner": {"analysis": 0.95},
                "joker": {"playful": 0.95}, "mediator": {"deescalation": 0.95}}  # fmt: skip

PERSONAS: dict[str, dict[str, dict[str, str]]] = {
    "zh-CN": {
        "comforter": {"name": "林溪", "headline": "温柔的倾听者",
                      "personalityPrompt": "细心、温暖，先接住对方的情绪，再轻轻给一点支持。",
                      "tonePrompt": "语气柔和，句子短。"},
        "planner": {"name": "周衡", "headline": "冷静的分析师",
                    "personalityPrompt": "理性、条理清楚，喜欢把问题拆成几步，给出具体建议。",
                    "tonePrompt": "直接、务实。"},
        "joker": {"name": "阿乐", "headline": "群里的开心果",
                  "personalityPrompt": "幽默、爱开玩笑，总能让气氛轻松起来。",
                  "tonePrompt": "俏皮、活泼，偶尔用语气词。"},
        "mediator": {"name": "沈宁", "headline": "和事佬",
                     "personalityPrompt": "沉稳、公道，擅长让激动的人冷静下来，帮大家找到共识。",
                     "tonePrompt": "平和、客观。"},
    },
    "en": {
        "comforter": {"name": "Lia", "headline": "A gentle listener",
                      "personalityPrompt": "Caring and warm; meets feelings first, then offers a little support.",
                      "tonePrompt": "Soft, short sentences."},
        "planner": {"name": "Heng", "headline": "A calm analyst",
                    "personalityPrompt": "Rational and structured; breaks problems into steps and gives concrete advice.",
                    "tonePrompt": "Direct and practical."},
        "joker": {"name": "Joy", "headline": "The group's clown",
                  "personalityPrompt": "Funny and playful; always lightens the mood.",
                  "tonePrompt": "Cheeky and lively."},
        "mediator": {"name": "Ning", "headline": "The peacemaker",
                     "personalityPrompt": "Steady and fair; calms heated people down and helps everyone agree.",
                     "tonePrompt": "Even and balanced."},
    },
}

# (text, expected first speaker's role or None when any companion is fine)
LINES: dict[str, list[tuple[str, str | None]]] = {
    "zh-CN": [
        ("我今天有点难过，不知道该怎么办。", "comforter"),
        ("我今天看到一个超好笑的视频，笑死我了", "joker"),
        ("室友又把我的东西弄坏了，气死我了！", "mediator"),
        ("帮我分析一下这两个工作机会，一个钱多一个离家近。", "planner"),
        ("明天要面试了，我好紧张，睡不着。", "comforter"),
        ("我升职了！太开心了！", "joker"),
        ("同事抢了我的功劳，我真的很生气。", "mediator"),
        ("下个月想去旅行，预算五千，怎么安排比较好？", "planner"),
        ("最近总是一个人吃饭，有点孤单。", "comforter"),
        ("周末大家一起去爬山吧，一定很好玩！", "joker"),
        ("你们觉得我应该先还信用卡还是先存钱？", "planner"),
        ("我和朋友吵架了，现在还在气头上。", "mediator"),
    ],
    "en": [
        ("I feel really down today and I don't know why.", "comforter"),
        ("I just got promoted, I'm so happy!", "joker"),
        ("My roommate broke my headphones again and I'm furious.", "mediator"),
        ("Can you help me plan a budget for a week in Japan?", "planner"),
        ("I have an exam tomorrow and I'm so anxious I can't sleep.", "comforter"),
        ("Should I pay off my card first or start saving?", "planner"),
    ],
}


def agent_body(language: str, role: str) -> dict[str, Any]:
    return {**PERSONAS[language][role], "capabilities": CAPABILITIES[role]}


RECENT_WINDOW = 12  # the server's default ``turns.recentWindow``: what a reply was checked against


def scaffolding(language: str) -> tuple[str, ...]:
    """The actor prompt's own fixed wording for ``language``: every template's text between its
    variables and the fixed words (``Words``: scene lines, notes, retry corrections)."""
    import re

    from app.llm.templates import PromptTemplates
    from app.turns.actor_prompt import words_for

    templates = PromptTemplates()
    words = words_for(language)
    parts: list[str] = []
    for name in ("actor", "cross_reply"):
        raw = templates.text(templates.localized(name, language))
        parts += [p for p in re.split(r"\{\{[^}]*\}\}", raw) if p.strip()]
    fixed = (words.group_scene, words.direct_scene, words.continue_note, words.retry_lead, words.cross_note,
             *words.fixes.values())  # fmt: skip
    parts += [p for text in fixed for p in re.split(r"\{[^}]*\}", text) if p.strip()]
    return tuple(dict.fromkeys(parts))


def persona_text(language: str, role: str) -> str:
    """The persona fields a member of the group was given (what the reply checks compare with)."""
    return "\n".join(v for k, v in PERSONAS[language][role].items() if k != "name")


def saved_reply_problems(messages: list[dict[str, Any]], names: dict[str, str], language: str,
                         personas: dict[str, str] | None = None) -> dict[str, list[str]]:  # fmt: skip
    """The reply checks run again on what was saved: for every agent message of ``messages`` (a
    conversation's messages, oldest first, as the API lists them), the problem codes of echo,
    repeat, prompt wording, speaking for others or as the user, an assistant's voice and a tone at odds with the user's line, against the user's message it answers and the
    ``RECENT_WINDOW`` messages before it, and ``personas`` (agent id → its persona text) for the
    persona leak. Returns message id → codes, only for messages with any."""
    from app.turns.quality import copy_problems, speaker_label, takes_the_users_feeling, users_own_words
    from app.turns.tone import glad_about_distress, sorry_about_joy
    from story.auto_reply.helpdesk import machine_voice

    wording = scaffolding(language)
    found: dict[str, list[str]] = {}
    for i, m in enumerate(messages):
        if m["role"] != "agent":
            continue
        before = messages[max(0, i - RECENT_WINDOW):i]
        users = [b["content"] for b in before if b["role"] == "user"]
        own = names.get(m["agentId"], "")
        others = [n for a, n in names.items() if a != m["agentId"]]
        window = [b["content"] for b in before if b["role"] != "user" or b["content"] != (users[-1] if users else None)]
        problems = copy_problems(m["content"], user_text=users[-1] if users else "", window=window,
                                 scaffolding=wording, persona=(personas or {}).get(m["agentId"], ""))  # fmt: skip
        if speaker_label(m["content"], others, [own]) is not None:
            problems.append("speaks_as_other")
        if users and (users_own_words(m["content"], users[-1]) or takes_the_users_feeling(m["content"], users[-1])):
            problems.append("speaks_as_user")
        if machine_voice(m["content"]) is not None:
            problems.append("assistant_voice")
        if glad_about_distress(m["content"], users[-1] if users else "") is not None:
            problems.append("glad_about_distress")
        if users and sorry_about_joy(m["content"], users[-1]) is not None:
            problems.append("sorry_about_joy")
        if problems:
            found[m["id"]] = [p.split(":", 1)[0] for p in problems]
    return found


# The turns' own suggestions cost a CPU server one list call and up to two rounds of lines per
# turn; tests that do not assert on them switch them off, and switch them on (``suggestions_on``)
# only before an explicit suggestions or write-for-me call. Keeps the real-model tail of CI short.
OWN_SUGGESTIONS_OFF = {"autoReply": {"enabled": False}}


async def suggestions_on(api: Any, conv_id: str, **auto_reply: Any) -> None:
    """Switch the conversation's auto-reply on (with ``auto_reply`` fields) for an explicit call."""
    from tests.integration.conftest import ALICE

    resp = await api.client.patch(f"/v1/conversations/{conv_id}", headers=ALICE,
                                  json={"settings": {"autoReply": {"enabled": True, **auto_reply}}})  # fmt: skip
    assert resp.status_code == 200, resp.text
