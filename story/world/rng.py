"""A tiny deterministic generator whose whole state is one integer kept in the snapshot.

``random.Random`` state is large and version-bound; splitmix64 fits in the saved JSON, so a
restored snapshot continues the exact same sequence and a replay never re-rolls differently.
"""

from __future__ import annotations

import hashlib

_MASK = (1 << 64) - 1


def seed_state(seed: int, salt: str = "") -> int:
    digest = hashlib.sha256(f"{seed}:{salt}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


class SplitMix:
    def __init__(self, state: int) -> None:
        self.state = state & _MASK

    def next_u64(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & _MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        return z ^ (z >> 31)

    def roll(self, sides: int) -> int:
        """1..sides inclusive."""
        return self.next_u64() % sides + 1

    def pick(self, n: int) -> int:
        """0..n-1."""
        return self.next_u64() % n
