"""Task instructions for the narrative model tools (replaceable through ``options.prompt``).

The lengths and counts they state are the ones the output schemas enforce (``story.tools.bounds``).
"""

from story.narrative.evidence import MIN_QUOTE_CHARS
from story.tools.bounds import (
    CONTINUITY_CHARS, DIRECTION_CHARS, EXPERIENCE_CHARS, GIST_CHARS, ID_CHARS, NOTE_CHARS, PURSUIT_CHARS, QUOTE_CHARS,
    REWARD_CHARS, THEME_CHARS,
)

_LINE_LIMITS = (f"A line: theme at most {THEME_CHARS} characters, direction {DIRECTION_CHARS}, "
                f"experience {EXPERIENCE_CHARS}; continuity at most {CONTINUITY_CHARS}.")

PLAN = (
    "You plan the next batch of story goals for an interactive role-play. Add {lo}-{hi} NEW goals with new short ids "
    f"(at most {ID_CHARS} characters); "
    "at least {sub} must serve the sub line. Each goal: serves main|sub, angle character|relationship|conflict|reveal|reward, "
    f"a one-sentence gist (at most {GIST_CHARS} characters), the reward it promises (at most {REWARD_CHARS} characters, "
    "or \"\"), core true for goals the cycle hinges on, priority 1-5, prerequisites: up to 3 ids of the listed open "
    "non-reward goals or completed goals (or none). A reward goal must depend on such a setup goal; plan no reward goal "
    "while there is none. Goals are intentions, never facts that happened. Never plan the user's decisions."
)
SETTLE = (
    "You judge what one finished or interrupted story event actually achieved, using ONLY its accepted text. "
    "completed_goals: open goals the text clearly shows done, each with an exact quote from the text as evidence "
    f"(a whole clause copied verbatim, at least {MIN_QUOTE_CHARS} and at most {QUOTE_CHARS} characters). "
    "line_progress: main/sub lines the text moved forward (at most one claim per line), each with an exact quote and a "
    f"note of at most {NOTE_CHARS} characters. Goal completion and line progress are "
    "separate judgements. emotion: the observed valence (-1..1), arousal and dominance (0..1), or null. new_pursuit: a short "
    f"phrase (at most {PURSUIT_CHARS} characters) if the user explicitly pursues something other than the main direction "
    "(reuse the exact wording of a recent pursuit if it is the same), else \"\". status unknown if the text does not allow "
    "a judgement."
)
REBRANCH_MAIN = (
    "The user has consistently pursued a new direction: {direction!r}. Rewrite the main line (and a matching sub line) "
    "towards it. Keep every established fact and every unpaid promise. continuity: how the old threads carry over. "
    + _LINE_LIMITS
)
REBRANCH_SUB = (
    "The sub line has not progressed for a long time. Replace ONLY the sub line with a fresh one that fits the main line "
    "and the established facts; main must be null. continuity: how the change is explained in the story. " + _LINE_LIMITS
)
