"""Auto-reply: suggested next user messages anchored to an agent message (pure library).

Depends on the stdlib and msgspec only; the model comes in through the structural port in
``ports``: the host's structured path (``complete_struct``) builds the wire schema from
``SuggestionOptions`` and the library's bounds, decodes, runs the library's checks and repairs. The app reads the saved anchor and context from its database, calls
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
from .inputs import Anchor, ContextMessage, Guidance, SuggestionInput, SuggestionOptions, option_constraints
from .ports import PURPOSE, ChatMessage, ChatModel, ModelRequest, ResponseSchema, StructuredModel
from .prompt import DEFAULT_TEMPLATE, build_messages, check_template, render_system_prompt
from .validate import Checked, check_options

__all__ = [
    "DEFAULT_TEMPLATE", "MAX_ATTEMPTS", "PURPOSE",
    "Anchor", "AttemptRecord", "AutoReplyConfig", "AutoReplyConfigInvalid", "AutoReplyDisabled",
    "AutoReplyError", "AutoReplyGenerationFailed", "ChatMessage", "ChatModel", "ContextMessage",
    "Guidance", "InvalidSuggestionInput", "ModelRequest", "ResponseSchema", "SuggestionInput",
    "Checked", "StructuredModel", "SuggestionOptions", "SuggestionResult", "SuggestionUsage", "TemplateError",
    "build_messages", "check_options", "check_template", "conservative_options",
    "format_numbered", "generate_suggestions", "option_constraints", "render_system_prompt",
    "validate_config",
]
