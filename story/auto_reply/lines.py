"""Suggestions line by line: the options a rejected list answer still lacks, one plain line each.

A small local model asked for three options in one JSON list writes the character's reply (or
one sentence) three times: on Qwen2.5-0.5B 2 of 9 list answers passed the checks, and both of
those were the character's lines. Asked for one line of its own, in the chat with the roles
swapped (the write-for-me prompt, ``impersonate.build_messages``), the same model answers as the
user; a short direction in brackets (ask a question, change the subject) makes each line take
its own way. So when the list is rejected, its options that pass the checks are kept and each
missing one is written as such a line, checked like write-for-me's (the list's checks plus an
echo of the user's own lines, a re-said companion line, a refusal) and against the options
already kept (no duplicates, no near-duplicates).

A round asks one line for every missing option at once (a local server serves them side by
side) and counts as one attempt of the generation's budget. The last round also asks spare lines,
one for each direction no missing option has. Lines are taken as they arrive: the first that pass
fill the options and the calls still running (spares not needed, a line stuck on a busy server) are
stopped, so one more bad or slow line no longer fails the whole set. Every line is asked with the context's
tokens penalised (OpenAI's presence and frequency penalties) and sees only the user's last message
and the line it answers: shown the whole window, Qwen2.5-0.5B copied a companion's earlier line
into its answer; on nine anchors of a real group chat, lines without the penalty were ready on 4,
with it on 5, and with the companion's line alone (no user line) on 2 (it then wrote "阿乐：…").
"""

from __future__ import annotations

import asyncio
import re
import time
from typing import Any

import msgspec

from .config import AutoReplyConfig
from .impersonate import (
    COPY_PENALTY, MAX_LINE_TOKENS, ImpersonateInput, build_messages, check_line, clean, fit, voice_of_user_problems,
    whole_sentences,
)
from .inputs import ContextMessage, SuggestionInput
from .ports import PURPOSE, ModelRequest
from .prompt import window
from .text import primary_language
from .usage import SuggestionUsage, add_usage, usage_of
from .validate import Checked, check_options

DIRECTIONS = {
    "zh": ("", "（这次用一个问题回复）", "（这次说点别的，换个话题）", "（这次说说你自己的感受）",
           "（这次说说你接下来打算做什么）", "（这次只简短地回应一句）"),
    "en": ("", "(This time, answer with a question.)", "(This time, talk about something else.)",
           "(This time, say how you feel.)", "(This time, say what you will do next.)",
           "(This time, just react in a few words.)"),
}
"""Per option position: the first answers as the user naturally would, the others each take a
direction of the spec's examples (a question, a change of subject, a feeling, an action); the
directions no missing option has are the last round's spares."""


class Round(msgspec.Struct, frozen=True):
    problems: list[str]  # ``option N: …`` for each line rejected in this round
    ms: float


class Filled(msgspec.Struct, frozen=True):
    options: list[str]
    rounds: list[Round]
    usage: SuggestionUsage
    model: str | None

    def complete(self, count: int) -> bool:
        return len(self.options) == count


def talk_of(inp: SuggestionInput, config: AutoReplyConfig, speakers: list[str]) -> ImpersonateInput:
    """The chat as write-for-me sees it: the window, then the anchor, the companion's line answered."""
    return ImpersonateInput(
        language=inp.language, members=speakers, guidance=inp.guidance,
        context=[*window(inp, config.context_message_count),
                 ContextMessage(inp.anchor.agent_name, "agent", inp.anchor.content, inp.anchor.id)],
    )  # fmt: skip


def check_list(options: list[str], inp: SuggestionInput, config: AutoReplyConfig, speakers: list[str],
               talk: ImpersonateInput) -> Checked:
    """The list's checks (``check_options``) on the options cleaned of a user label ("我 (周衡)："),
    plus, per option, what makes a line not the user's own (``voice_of_user_problems``: the
    companion's line or the user's own said back, a member's line inside it, a refusal) in the
    chat as write-for-me sees it (``talk``, from ``talk_of``)."""
    limit = config.max_suggestion_chars
    checked = check_options([at_limit(clean(o), limit) for o in options], count=config.suggestion_count,
                            max_chars=limit, language=inp.language, speaker_names=speakers,
                            anchor_text=inp.anchor.content)  # fmt: skip
    extra = [f"option {n}: {p}" for n, o in enumerate(checked.options, 1) if o
             for p in [*voice_of_user_problems(o, talk), *cut_problems(o, limit)]]  # fmt: skip
    return Checked(options=checked.options, problems=checked.problems + extra)


def usable(options: list[str], inp: SuggestionInput, config: AutoReplyConfig, speakers: list[str],
           talk: ImpersonateInput) -> list[str]:
    """The options of a rejected list that pass every check on their own and against the ones
    kept before them, in order (cleaned as the checks clean them). Checked again one by one: an
    option the list's checks refused only as a near-copy of a refused option is still usable."""
    kept: list[str] = []
    limit = config.max_suggestion_chars
    for option in options[: config.suggestion_count]:
        line, problems = _check_with(kept, at_limit(clean(option), limit), inp, config, speakers)
        if not problems and not voice_of_user_problems(line, talk) and not cut_problems(line, limit):
            kept.append(line)
    return kept


GIST_CHARS = 80
"""The companion's line as the lines' prompt shows it: its first paragraph's whole sentences up to
this many characters. Qwen2.5-0.5B's replies run to numbered lists of advice, and asked to answer
one as the user it re-said a part of it on 7 of the 17 anchors of a real group chat."""


def gist(text: str, limit: int = GIST_CHARS) -> str:
    first = next((p.strip() for p in text.splitlines() if p.strip()), text.strip())
    return fit(first, limit)


def at_limit(option: str, limit: int) -> str:
    """An option the schema's length bound stopped (``limit`` characters, an unfinished sentence at
    the end): its whole sentences, when it has any ("…share some details? Do" → "…share some details?")."""
    return whole_sentences(option) if len(option) >= limit else option


def cut_problems(option: str, limit: int) -> list[str]:
    """An option stopped by the length bound inside its only sentence: a fragment, not a line."""
    if len(option) >= limit and whole_sentences(option) == option and not _ENDED.search(option):
        return [f"was cut off mid-sentence at the length limit ({limit} chars)"]
    return []


_ENDED = re.compile(r"[。！？!?….~～）)」』”\"']\s*$")


async def fill_lines(model: Any, inp: SuggestionInput, config: AutoReplyConfig, kept: list[str], *,
                     talk: ImpersonateInput, speakers: list[str], rounds: int, deadline: float) -> Filled:  # fmt: skip
    """``kept`` plus one line per missing option, within ``rounds`` rounds and the ``deadline``
    (the event loop's clock). Returns what it has when the rounds or the time run out."""
    options = list(kept)
    done: list[Round] = []
    usage, model_name = SuggestionUsage(), None
    # The prompt shows only the user's last message and the gist of the line answered: a small
    # model copies whatever companion lines it is shown; the checks still see the whole window.
    answered = talk.context[-1]
    answered = msgspec.structs.replace(answered, content=gist(answered.content))
    short = msgspec.structs.replace(talk, context=[*[m for m in talk.context if m.role == "user"][-1:], answered])
    directions = DIRECTIONS["zh" if primary_language(inp.language) == "zh" else "en"]
    loop = asyncio.get_running_loop()
    while len(done) < rounds and len(options) < config.suggestion_count and loop.time() < deadline:
        started = time.perf_counter()
        slots = list(range(len(options), config.suggestion_count))
        ways = [directions[slot % len(directions)] for slot in slots]
        if len(done) == rounds - 1:  # the last round: spares in the directions left over
            ways += [d for d in directions if d not in ways]
        calls = [asyncio.ensure_future(model.complete(_request(short, config, way))) for way in ways]
        problems: list[str] = []
        try:
            # Taken as they come: the first lines that pass fill the options, and the calls still
            # running then (spares, slow lines) are stopped. An answer already in counts even when
            # the time runs out before the others.
            async with asyncio.timeout_at(deadline):
                for arrival in asyncio.as_completed(calls):
                    try:
                        answer = await arrival
                    except Exception as exc:  # CancelledError is a BaseException and propagates
                        problems.append(f"option {len(options) + 1}: model call failed: {type(exc).__name__}: {exc}"[:300])
                        continue
                    usage = add_usage(usage, usage_of(getattr(answer, "usage", None)))
                    model_name = getattr(answer, "model", None) or model_name
                    line, wrong = check_line(str(getattr(answer, "text", "") or ""), talk, config,
                                             cut_off=getattr(answer, "finish_reason", None) == "length")  # fmt: skip
                    if not wrong:
                        line, wrong = _check_with(options, line, inp, config, speakers)
                    if wrong:
                        problems += [f"option {len(options) + 1}: {p}" for p in wrong]
                        continue
                    options.append(line)
                    if len(options) == config.suggestion_count:
                        break
        except TimeoutError:
            problems.append("model call timed out: no answer within the generation's budget")
        finally:
            for call in calls:
                call.cancel()
            await asyncio.gather(*calls, return_exceptions=True)
        done.append(Round(problems, round((time.perf_counter() - started) * 1000, 3)))
    return Filled(options, done, usage, model_name)


def _request(talk: ImpersonateInput, config: AutoReplyConfig, direction: str) -> ModelRequest:
    penalty = COPY_PENALTY
    return ModelRequest(
        messages=build_messages(talk, config, hint=direction), purpose=PURPOSE, temperature=config.temperature,
        max_tokens=min(config.max_tokens, MAX_LINE_TOKENS), timeout_s=config.timeout_s,
        model_config_id=config.model_config_id, presence_penalty=penalty, frequency_penalty=penalty,
    )  # fmt: skip


def _check_with(kept: list[str], option: str, inp: SuggestionInput, config: AutoReplyConfig,
                speakers: list[str]) -> tuple[str, list[str]]:  # fmt: skip
    """``option`` cleaned, and its problems as the next option after ``kept`` (by the list's checks)."""
    n = len(kept) + 1
    checked = check_options([*kept, option], count=n, max_chars=config.max_suggestion_chars, language=inp.language,
                            speaker_names=speakers, anchor_text=inp.anchor.content)  # fmt: skip
    mine = f"option {n}: "
    return checked.options[-1], [p.removeprefix(mine) for p in checked.problems if p.startswith(mine)]
