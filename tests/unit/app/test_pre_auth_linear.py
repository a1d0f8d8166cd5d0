"""Everything a request meets before authentication is linear in its size.

One unauthenticated 64 KB body of ``"`` followed by ``\\"`` used to hold the event loop for
8.9 s (a regex retried from every quote). Each check here gets adversarial inputs of 16 KB and
64 KB: the 64 KB one must finish in under 50 ms (best of three), and quadrupling the input may
not cost much more than four times as much (a quadratic check would cost sixteen).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from app.api.guard import check_body, json_depth
from app.auth.tokens import principal_from_header
from app.errors import AppError
from app.events.controller import parse_last_event_id

BUDGET_S = 0.050
SECRET = "s" * 40


def _best(fn: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        try:
            fn()
        except AppError:
            pass
        best = min(best, time.perf_counter() - start)
    return best


BODIES: dict[str, Callable[[int], bytes]] = {
    "quote then escaped quotes": lambda n: b'"' + b'\\"' * (n // 2),
    "lone quotes": lambda n: b'"' * n,
    "backslashes": lambda n: b'"' + b"\\" * n,
    "escaped backslash before u0000": lambda n: b'["' + b"\\\\" * (n // 2) + b'u0000"]',
    "open brackets": lambda n: b"[" * n,
    "empty arrays": lambda n: b"[]" * (n // 2),
    "many short strings": lambda n: b"[" + b'"a",' * (n // 4) + b"1]",
    "brackets inside a string": lambda n: b'["' + b"[{" * (n // 2) + b'"]',
    "unicode escapes": lambda n: b'["' + b"\\u4f60" * (n // 6) + b'"]',
}


@pytest.mark.parametrize("family", BODIES)
def test_the_body_guard_is_linear(family: str) -> None:
    make = BODIES[family]
    small, large = make(16 * 1024), make(64 * 1024)
    t_small = _best(lambda: check_body(small, "application/json"))
    t_large = _best(lambda: check_body(large, "application/json"))
    assert t_large < BUDGET_S, (family, t_large)
    assert t_large < 8 * max(t_small, 0.001), (family, t_small, t_large)


def test_the_issue_body_finishes_fast_and_depth_is_still_right() -> None:
    body = b'"' + b'\\"' * 32767
    assert _best(lambda: json_depth(body)) < BUDGET_S
    assert json_depth(b'{"a": ["[[[", {"b": [1, 2]}]}') == 4
    assert json_depth(b'["\\"[[", [[]]]') == 3
    assert json_depth(b"[" * 40) == 40
    assert json_depth(b'"unterminated [[[') == 0


HEADERS: dict[str, Callable[[int], str]] = {
    "bearer with a huge token": lambda n: "Bearer " + "a" * n,
    "bearer with dotted junk": lambda n: "Bearer " + "a." * (n // 2),
    "spaces": lambda n: "Bearer" + " " * n + "x",
}


@pytest.mark.parametrize("family", HEADERS)
def test_the_authorization_header_is_linear(family: str) -> None:
    make = HEADERS[family]
    small, large = make(16 * 1024), make(64 * 1024)
    t_small = _best(lambda: principal_from_header(SECRET, small))
    t_large = _best(lambda: principal_from_header(SECRET, large))
    assert t_large < BUDGET_S and t_large < 8 * max(t_small, 0.001), (family, t_small, t_large)


@pytest.mark.parametrize("raw", ["9" * 65536, "1" + "0" * 65535, "+" * 65536])
def test_a_hugeparse_last_event_id_is_refused_fast(raw: str) -> None:
    assert _best(lambda: parse_last_event_id(raw)) < BUDGET_S
    with pytest.raises(AppError):
        parse_last_event_id(raw)
