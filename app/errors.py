"""The app's one error tree.

Services and adapters raise these; a single exception handler (``app.api.errors``) maps them to
HTTP. Each error carries a machine-readable ``code`` and optional structured ``details`` so that a
client (or a test) never has to parse a human message.
"""

from __future__ import annotations

from typing import Any


class AppError(Exception):
    """Base of every error the app raises on purpose."""

    status_code: int = 500
    code: str = "internal_error"
    retryable: bool = False

    def __init__(self, message: str, *, code: str | None = None, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        self.details = details or {}


# --- client errors -------------------------------------------------------------------------


class ClientError(AppError):
    status_code = 400
    code = "bad_request"


class ValidationFailed(ClientError):
    status_code = 422
    code = "validation_failed"


class NotFound(ClientError):
    status_code = 404
    code = "not_found"


class Unauthorized(ClientError):
    status_code = 401
    code = "unauthorized"


class Forbidden(ClientError):
    status_code = 403
    code = "forbidden"


class PayloadTooLarge(ClientError):
    status_code = 413
    code = "payload_too_large"


# --- conflicts -----------------------------------------------------------------------------


class Conflict(AppError):
    status_code = 409
    code = "conflict"


class StaleStateWrite(Conflict):
    code = "stale_state_write"

    def __init__(self, expected_revision: int, actual_revision: int | None) -> None:
        super().__init__(
            f"state was changed by someone else (expected revision {expected_revision}, found {actual_revision})",
            details={"expectedRevision": expected_revision, "actualRevision": actual_revision},
        )
        self.expected_revision = expected_revision
        self.actual_revision = actual_revision


# --- configuration -------------------------------------------------------------------------


class SettingsError(AppError):
    """An invalid setting. Stops start-up with one message naming the setting."""

    code = "invalid_setting"

    def __init__(self, setting: str, problem: str) -> None:
        super().__init__(f"invalid setting {setting}: {problem}", details={"setting": setting})
        self.setting = setting
        self.problem = problem


# --- upstream / model errors ---------------------------------------------------------------


class UpstreamError(AppError):
    status_code = 502
    code = "upstream_error"


class ModelNotConfigured(UpstreamError):
    status_code = 503
    code = "model_not_configured"
    retryable = False

    def __init__(self, stage: str, *, config_id: str | None = None) -> None:
        if config_id is not None:  # named by a request (an agent's own model), not found in [llm.models]
            message = (f"model config '{config_id}' is not in [llm.models] of the TOML file named by "
                       "COMPANION_CONFIG; add it, or point the agent at another modelConfigId")
            details = {"stage": stage, "modelConfigId": config_id}
        else:
            message = (f"no language model is configured for stage '{stage}'. Set COMPANION_LLM_BASE_URL and "
                       "COMPANION_LLM_MODEL (and COMPANION_LLM_API_KEY or OPENAI_API_KEY), or map the stage to a "
                       "model config in the TOML file named by COMPANION_CONFIG.")
            details = {"stage": stage}
        super().__init__(message, details=details)
        self.stage = stage


class ModelUnavailable(UpstreamError):
    status_code = 503
    code = "model_unavailable"
    retryable = True
    retry_after_s: float | None = None  # the server's Retry-After, when it sent one


class ModelTimeout(ModelUnavailable):
    code = "model_timeout"


class ModelCircuitOpen(ModelUnavailable):
    """A model config's circuit breaker is open: the call failed fast, without reaching the server."""

    def __init__(self, model_config: str, *, retry_after_s: float, open_until: str, failures: int,
                 probing: bool = False) -> None:  # fmt: skip
        why = ("a probe call is testing it" if probing
               else f"until {open_until} ({retry_after_s:.1f}s) after {failures} calls in a row failed")  # fmt: skip
        super().__init__(
            f"model {model_config} is unavailable: its circuit breaker is open, {why}; "
            "calls fail fast without reaching the server",
            details={"modelConfig": model_config, "circuit": "half_open" if probing else "open",
                     "openUntil": open_until, "retryAfterS": round(retry_after_s, 3)},
        )  # fmt: skip
        self.model_config = model_config
        self.retry_after_s = retry_after_s
        self.open_until = open_until
        self.failures = failures


class ModelContextOverflow(UpstreamError):
    """The prompt plus the token budget does not fit the model's context window."""

    code = "model_context_overflow"


class ModelRefused(UpstreamError):
    code = "model_refused"


class InvalidModelOutput(UpstreamError):
    """The model kept answering with output that failed decoding or validation."""

    code = "invalid_model_output"

    def __init__(self, attempts: int, problems: list[str], *, code: str | None = None) -> None:
        super().__init__(
            f"model output was invalid after {attempts} attempt(s): " + "; ".join(problems[-3:]),
            code=code,
            details={"attempts": attempts, "problems": problems},
        )
        self.attempts = attempts
        self.problems = problems
