"""Bearer tokens are checked strictly: RFC 7519 claim types, and no header that points at a key."""

from __future__ import annotations

import time

import jwt
import pytest

from app.auth.tokens import issue_token, verify_token
from app.errors import Unauthorized

SECRET = "s" * 40


def _token(claims: dict, headers: dict | None = None, alg: str = "HS256") -> str:
    return jwt.encode(claims, SECRET, algorithm=alg, headers=headers)


def _claims(**extra: object) -> dict:
    now = int(time.time())
    return {"sub": "alice", "iat": now, "exp": now + 600, **extra}


def _refused(token: str) -> str:
    with pytest.raises(Unauthorized) as caught:
        verify_token(SECRET, token)
    assert caught.value.code == "invalid_token"
    return str(caught.value)


def test_an_issued_token_verifies() -> None:
    assert verify_token(SECRET, issue_token(SECRET, "alice")).user_id == "alice"
    assert verify_token(SECRET, _token(_claims(nbf=int(time.time()) - 5, exp=time.time() + 60.5))).user_id == "alice"


@pytest.mark.parametrize("name", ["exp", "iat", "nbf"])
def test_a_date_claim_given_as_a_string_is_refused(name: str) -> None:
    claims = _claims()
    claims[name] = str(int(time.time()) + (600 if name == "exp" else -5))
    assert name in _refused(_token(claims))


def test_a_boolean_date_is_refused() -> None:
    assert "exp" in _refused(_token(_claims(exp=True)))


@pytest.mark.parametrize("sub", [7, "", None, ["alice"], "x" * 129])
def test_a_subject_that_is_not_a_short_string_is_refused(sub: object) -> None:
    _refused(_token(_claims(sub=sub)))


@pytest.mark.parametrize("member", ["kid", "jku", "x5u", "jwk", "x5c", "crit"])
def test_a_header_that_points_at_a_key_is_refused_not_ignored(member: str) -> None:
    value: object = ["exp"] if member == "crit" else "https://attacker.example/key"
    assert member in _refused(_token(_claims(), headers={member: value}))


@pytest.mark.parametrize("alg", ["HS384", "HS512", "none"])
def test_another_algorithm_is_refused(alg: str) -> None:
    token = jwt.encode(_claims(), None if alg == "none" else SECRET, algorithm=alg)
    _refused(token)


def test_an_expired_token_says_so() -> None:
    with pytest.raises(Unauthorized) as caught:
        verify_token(SECRET, _token(_claims(exp=int(time.time()) - 100)))
    assert caught.value.code == "token_expired"


def test_a_remembered_token_is_still_checked_against_the_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """A verified token is remembered (its signature is not checked again), its dates are not:
    the same token, once expired or before its ``nbf``, is refused like a new one."""
    now = time.time()
    token = _token(_claims(nbf=int(now) - 1, exp=int(now) + 60))
    assert verify_token(SECRET, token).user_id == "alice"
    assert verify_token(SECRET, token).user_id == "alice"  # remembered
    monkeypatch.setattr(time, "time", lambda: now + 61)
    with pytest.raises(Unauthorized) as caught:
        verify_token(SECRET, token)
    assert caught.value.code == "token_expired"
    monkeypatch.setattr(time, "time", lambda: now - 30)
    assert "not yet valid" in _refused(token)


def test_a_remembered_token_does_not_verify_under_another_secret() -> None:
    token = issue_token(SECRET, "alice")
    assert verify_token(SECRET, token).user_id == "alice"
    with pytest.raises(Unauthorized) as caught:
        verify_token("t" * 40, token)
    assert caught.value.code == "invalid_token"
