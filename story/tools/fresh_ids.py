"""New ids are the program's: a model's slug for a new thing is only a suggestion.

A model that names new events, threads, seeds or goals may repeat a slug or reuse one that
exists (a small schema-following model fills every list with the same item). Asking it again
cannot be relied on to help, and the rule it broke is mechanical, so the library settles it:
each new id keeps the model's slug when it is free, else gets the first free ``-2``, ``-3``, …
suffix. Only ids that nothing else in the same proposal can reference are renamed (references
to existing things are ``enum``s of existing ids, never of new ones), so no reference breaks.
"""

from __future__ import annotations

from collections.abc import Iterable

from story.tools.bounds import ID_CHARS


def fresh_ids(proposed: Iterable[str], taken: Iterable[str]) -> list[str]:
    """The proposed ids in order, each made distinct from ``taken`` and from the ones before it."""
    used = set(taken)
    out: list[str] = []
    for raw in proposed:
        base = raw.strip() or "id"
        candidate, n = base[:ID_CHARS], 1
        while candidate in used:
            n += 1
            suffix = f"-{n}"
            candidate = base[: ID_CHARS - len(suffix)] + suffix
        used.add(candidate)
        out.append(candidate)
    return out
