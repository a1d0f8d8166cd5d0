"""Auto-reply: suggested next user messages anchored to an agent message (pure library).

Depends on the stdlib and msgspec only; the model comes in through the structural port in
``ports``. The app reads the saved anchor and context from its database, calls
``generate_suggestions`` and stores the result as a suggestion — never as a chat message.
"""

from .config import AutoReplyConfig, validate_config
from .errors import (
    AutoReplyConfigInvalid,
    AutoReplyDisabled,
    AutoReplyError,
    AutoReplyGenerationFailed,
    InvalidSuggestionInput,
    TemplateError,
)
from .fallback import conservative_options
from .generator import (
    MAX_ATTEMPTS,
    AttemptRecord,
    SuggestionResult,
    SuggestionUsage,
    format_numbered,
    generate_suggestions,
)
from .inputs import Anchor, ContextMessage, Guidance, SuggestionInput, SuggestionOptions, options_json_schema
from .ports import PURPOSE, ChatMessage, ChatModel, ModelRequest, ResponseSchema
from .prompt import DEFAULT_TEMPLATE, build_messages, check_template, render_system_prompt
from .validate import check_options, decode_options

__all__ = [
    "DEFAULT_TEMPLATE", "MAX_ATTEMPTS", "PURPOSE",
    "Anchor", "AttemptRecord", "AutoReplyConfig", "AutoReplyConfigInvalid", "AutoReplyDisabled",
    "AutoReplyError", "AutoReplyGenerationFailed", "ChatMessage", "ChatModel", "ContextMessage",
    "Guidance", "InvalidSuggestionInput", "ModelRequest", "ResponseSchema", "SuggestionInput",
    "SuggestionOptions", "SuggestionResult", "SuggestionUsage", "TemplateError",
    "build_messages", "check_options", "check_template", "conservative_options", "decode_options",
    "format_numbered", "generate_suggestions", "options_json_schema", "render_system_prompt",
    "validate_config",
]
