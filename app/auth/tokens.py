"""HS256 bearer tokens. The user id always comes from a verified token's ``sub`` claim.

PyJWT is used rather than hand-rolled HMAC code: it gets expiry, algorithm pinning and
claim validation right, and Litestar's own JWT support builds on it.
"""

from __future__ import annotations

import re
import time

import jwt
import msgspec

from app.errors import Forbidden, Unauthorized

ALGORITHM = "HS256"
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


def verify_token(secret: str, token: str) -> Principal:
    try:
        claims = jwt.decode(token, secret, algorithms=[ALGORITHM], options={"require": ["sub", "exp"]})
    except jwt.ExpiredSignatureError:
        raise Unauthorized("token has expired", code="token_expired") from None
    except jwt.InvalidTokenError as exc:
        raise Unauthorized(f"invalid token: {exc}", code="invalid_token") from None
    sub = claims.get("sub")
    if not isinstance(sub, str) or not sub or len(sub) > 128 or "\x00" in sub:
        raise Unauthorized("invalid token: bad 'sub' claim", code="invalid_token")
    scope = claims.get("scope", "")
    scopes = scope.split() if isinstance(scope, str) else []
    return Principal(user_id=sub, is_admin="admin" in scopes)


def principal_from_header(secret: str, header: str | None) -> Principal:
    if not header:
        raise Unauthorized("missing Authorization header (expected 'Bearer <token>')", code="missing_token")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthorized("Authorization header must be 'Bearer <token>'", code="invalid_token")
    return verify_token(secret, token.strip())
