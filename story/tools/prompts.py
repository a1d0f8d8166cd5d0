"""Task instructions for the narrative model tools (replaceable through ``options.prompt``)."""

PLAN = (
    "You plan the next batch of story goals for an interactive role-play. Add {lo}-{hi} NEW goals with new ids; "
    "at least {sub} must serve the sub line. Each goal: serves main|sub, angle character|relationship|conflict|reveal|reward, "
    "a one-sentence gist, the reward it promises (or \"\"), core true for goals the cycle hinges on, priority 1-5, "
    "prerequisites as goal ids. A reward goal must depend on a setup goal. Goals are intentions, never facts that happened. "
    "Never plan the user's decisions."
)
SETTLE = (
    "You judge what one finished or interrupted story event actually achieved, using ONLY its accepted text. "
    "completed_goals: open goals the text clearly shows done, each with an exact quote from the text as evidence. "
    "line_progress: main/sub lines the text moved forward, each with an exact quote. Goal completion and line progress are "
    "separate judgements. emotion: the observed valence (-1..1), arousal and dominance (0..1), or null. new_pursuit: a short "
    "phrase if the user explicitly pursues something other than the main direction (reuse the exact wording of a recent "
    "pursuit if it is the same), else \"\". status unknown if the text does not allow a judgement."
)
REBRANCH_MAIN = (
    "The user has consistently pursued a new direction: {direction!r}. Rewrite the main line (and a matching sub line) "
    "towards it. Keep every established fact and every unpaid promise. continuity: how the old threads carry over."
)
REBRANCH_SUB = (
    "The sub line has not progressed for a long time. Replace ONLY the sub line with a fresh one that fits the main line "
    "and the established facts; main must be null. continuity: how the change is explained in the story."
)
