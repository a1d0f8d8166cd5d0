"""HS256 bearer tokens. The user id always comes from a verified token's ``sub`` claim.

PyJWT is used rather than hand-rolled HMAC code: it gets expiry, algorithm pinning and
claim validation right, and Litestar's own JWT support builds on it.
"""

from __future__ import annotations

import functools
import re
import time

import jwt
import msgspec

from app.errors import Forbidden, Unauthorized

ALGORITHM = "HS256"
# Header members this server understands. Anything else (``kid``, ``jku``, ``x5u``, ``jwk``,
# ``x5c``, ``crit``, …) would ask the verifier to look a key up somewhere: refused, not ignored.
_HEADER_KEYS = frozenset({"alg", "typ"})
_NUMERIC_DATES = ("exp", "iat", "nbf")
_TTL = re.compile(r"^(\d+)([smhd])$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


class Principal(msgspec.Struct, frozen=True):
    user_id: str
    is_admin: bool = False

    def require_admin(self) -> None:
        if not self.is_admin:
            raise Forbidden("this operation needs an admin token (scope 'admin')", code="admin_required")


def parse_ttl(text: str) -> int:
    """'90s', '15m', '12h', '1d' -> seconds."""
    match = _TTL.match(text.strip())
    if not match or int(match.group(1)) <= 0:
        raise ValueError(f"invalid TTL {text!r}: use a positive number with s, m, h or d (e.g. 1d)")
    return int(match.group(1)) * _UNITS[match.group(2)]


def issue_token(secret: str, user_id: str, *, admin: bool = False, ttl_s: int = 86400, now: float | None = None) -> str:
    if not user_id or len(user_id) > 128:
        raise ValueError("user id must be 1-128 characters")
    issued = int(now if now is not None else time.time())
    claims: dict[str, object] = {"sub": user_id, "iat": issued, "exp": issued + ttl_s}
    if admin:
        claims["scope"] = "admin"
    return jwt.encode(claims, secret, algorithm=ALGORITHM)


def _invalid(reason: str) -> Unauthorized:
    return Unauthorized(f"invalid token: {reason}", code="invalid_token")


def _is_numeric_date(value: object) -> bool:
    """RFC 7519 NumericDate: a JSON number (PyJWT alone would also take the string "1796233500")."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def verify_token(secret: str, token: str) -> Principal:
    principal, exp, nbf = _checked(secret, token)
    now = time.time()
    if exp <= now:
        raise Unauthorized("token has expired", code="token_expired")
    if nbf > now:
        raise _invalid("the token is not yet valid ('nbf' is in the future)")
    return principal


@functools.lru_cache(maxsize=4096)
def _checked(secret: str, token: str) -> tuple[Principal, float, float]:
    """The token's signature, header and claims checked: its principal and its dates (``exp``,
    ``nbf``; checked against the clock on every use). Remembered per token: a client sends the
    same token with every request, and the check is most of a short request's own work. A token
    that fails is not remembered (the error is raised again each time)."""
    try:
        header = jwt.get_unverified_header(token)
        unknown = sorted(set(header) - _HEADER_KEYS)
        if unknown:
            raise _invalid(f"header member {unknown[0]!r} is not accepted")
        if header.get("alg") != ALGORITHM:
            raise _invalid(f"algorithm {header.get('alg')!r} is not accepted (only {ALGORITHM})")
        # The signature is checked here; the dates below, once their types are known to be right.
        claims = jwt.decode(token, secret, algorithms=[ALGORITHM], options={
            "require": ["sub", "exp"], "verify_exp": False, "verify_nbf": False, "verify_iat": False})  # fmt: skip
    except jwt.InvalidTokenError as exc:
        raise _invalid(str(exc)) from None
    for name in _NUMERIC_DATES:
        if name in claims and not _is_numeric_date(claims[name]):
            raise _invalid(f"'{name}' must be a NumericDate (a JSON number)")
    sub = claims.get("sub")
    if not isinstance(sub, str) or not sub or len(sub) > 128 or "\x00" in sub:
        raise _invalid("bad 'sub' claim")
    scope = claims.get("scope", "")
    scopes = scope.split() if isinstance(scope, str) else []
    return Principal(user_id=sub, is_admin="admin" in scopes), float(claims["exp"]), float(claims.get("nbf", 0))


def principal_from_header(secret: str, header: str | None) -> Principal:
    if not header:
        raise Unauthorized("missing Authorization header (expected 'Bearer <token>')", code="missing_token")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthorized("Authorization header must be 'Bearer <token>'", code="invalid_token")
    return verify_token(secret, token.strip())
