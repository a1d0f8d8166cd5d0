"""Per-conversation settings: validated on write, stored normalised (defaults filled in).

Unknown keys anywhere are rejected (422) so a typo never silently does nothing. The same holds
for model config ids (``story.modelConfigId``, ``story.initializerModelConfigId``,
``autoReply.modelConfigId``): an id the app has no model config for would leave the feature
silently off, so it is a 422 that names the configs that exist. The known ids come from the
caller (``model_config_ids``) or, when it passes none, from ``register_model_configs`` at start-up;
``None`` (an injected test model that answers any id) checks nothing.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta

from app.api.schemas import ApiInput
from app.errors import ValidationFailed
from scheduling.presence import DEFAULT_HISTORY, HistoryMode
from scheduling.selection.mode import DEFAULT_HYBRID_MARGIN, DEFAULT_MODE, SelectionMode
from scheduling.selection.order import ReplyOrder

_BCP47 = re.compile(r"^[A-Za-z]{2,3}(-[A-Za-z]{4})?(-([A-Za-z]{2}|\d{3}))?(-[A-Za-z0-9]{5,8})*$")


class StorySettings(ApiInput):
    enabled: bool = False
    model_config_id: str | None = None
    initializer_model_config_id: str | None = None
    model_call_timeout_ms: Annotated[int, Meta(ge=1_000, le=180_000)] = 45_000
    post_turn_timeout_ms: Annotated[int, Meta(ge=1_000, le=180_000)] = 90_000
    max_state_bytes: Annotated[int, Meta(ge=4_000, le=60_000)] = 60_000
    seed: Annotated[int, Meta(ge=0, le=2**32 - 1)] = 731


class AutoReplySettings(ApiInput):
    enabled: bool = True
    model_config_id: str | None = None
    suggestion_count: Annotated[int, Meta(ge=2, le=4)] = 3
    context_message_count: Annotated[int, Meta(ge=2, le=6)] = 6
    max_suggestion_chars: Annotated[int, Meta(ge=32, le=300)] = 160
    max_tokens: Annotated[int, Meta(ge=64, le=1024)] = 384
    timeout_ms: Annotated[int, Meta(ge=1_000, le=30_000)] = 15_000
    temperature: Annotated[float, Meta(ge=0.0, le=2.0)] = 0.7
    fallback: Literal["none", "conservative"] = "none"


class SelectionSettings(ApiInput):
    """Who decides the speakers (``scheduling/selection/mode.py``): ``llm`` asks the model selector
    whenever it is needed, ``scorer`` never does, ``hybrid`` only when the scorer's margin between
    its last pick and the best candidate it left out is below ``hybridMargin``."""

    mode: SelectionMode = DEFAULT_MODE
    hybrid_margin: Annotated[float, Meta(ge=0.0, le=10.0)] = DEFAULT_HYBRID_MARGIN


class LoreSettings(ApiInput):
    """Lore (world info, ``app/lore``): the most tokens of triggered entries one reply's prompt gets
    (estimated: a CJK character one token, four other characters one); 0 turns lore off."""

    token_budget: Annotated[int, Meta(ge=0, le=4000)] = 400


class ConversationSettings(ApiInput):
    language: Annotated[str, Meta(min_length=2, max_length=35)] = "zh-CN"
    reply_limit: Annotated[int, Meta(ge=1, le=4)] = 2
    chattiness: Literal["quiet", "balanced", "lively"] = "balanced"
    story: StorySettings = msgspec.field(default_factory=StorySettings)
    auto_reply: AutoReplySettings = msgspec.field(default_factory=AutoReplySettings)
    selection: SelectionSettings = msgspec.field(default_factory=SelectionSettings)
    # staged: the seed's pipeline (intent ∥ emotion, then the selector when the mode asks it);
    # combined: one structured call for all three judgements (app/turns/combined.py).
    orchestration: Literal["staged", "combined"] = "staged"
    lore: LoreSettings = msgspec.field(default_factory=LoreSettings)
    # who replies when nobody is named (scheduling/selection/order.py): natural (mentions, then the
    # model or the scorer), list (round robin in display order), pooled (everyone once before
    # anyone twice, best ranked first), manual (only named members, or one asked to speak)
    reply_order: ReplyOrder = "natural"
    # presence (scheduling/presence.py): sinceJoin, a member knows only the messages it witnessed (one
    # added later: from its joining on); all, every member reads the whole conversation
    history: HistoryMode = DEFAULT_HISTORY
    # who reads the user's emotion in a staged turn: model (the seed's emotion stage; the offline
    # reading on any failure), offline (the offline detector alone, no model call: on Qwen2.5-0.5B
    # the model's reading routed worse than the offline one; see README "Emotion source")
    emotion_source: Literal["model", "offline"] = "model"


_known_model_configs: frozenset[str] | None = None


def register_model_configs(ids: Collection[str] | None) -> None:
    """The model config ids settings may name (the app's ``[llm.models]``); ``None`` → any."""
    global _known_model_configs
    _known_model_configs = frozenset(ids) if ids is not None else None


def check_model_config(field: str, model_id: str, known: Collection[str] | None = None, *, prefix: str = "") -> None:
    """422 ``unknown_model_config`` when ``model_id`` is not one of ``known`` (default: the
    registered ``[llm.models]``; none registered → any id is accepted)."""
    known = known if known is not None else _known_model_configs
    if known is not None and model_id not in known:
        existing = ", ".join(sorted(known)) or "none are configured"
        raise ValidationFailed(
            f"{prefix}{field} {model_id!r} is not a model config (existing: {existing})",
            code="unknown_model_config", details={"field": field},
        )  # fmt: skip


def _check_model_configs(settings: ConversationSettings, known: Collection[str] | None) -> None:
    if known is None:
        return
    named = [("story.modelConfigId", settings.story.model_config_id if settings.story.enabled else None),
             ("story.initializerModelConfigId",
              settings.story.initializer_model_config_id if settings.story.enabled else None),
             ("autoReply.modelConfigId", settings.auto_reply.model_config_id)]  # fmt: skip
    for field, model_id in named:
        if model_id is not None:
            check_model_config(field, model_id, known, prefix="invalid settings: ")


def parse_settings(raw: dict[str, Any] | None, base: dict[str, Any] | None = None, *,
                   model_config_ids: Collection[str] | None = None) -> ConversationSettings:
    """Validate ``raw`` (camelCase keys) merged over ``base`` (a stored, normalised settings dict).

    Nested blocks merge one level deep, so ``{"autoReply": {"enabled": false}}`` keeps the other
    auto-reply values."""
    merged: dict[str, Any] = dict(base or {})
    raw = _story_on_when_given(raw)
    for key, value in (raw or {}).items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = {**merged[key], **value}
        else:
            merged[key] = value
    try:
        settings = msgspec.convert(merged, ConversationSettings)
    except msgspec.ValidationError as exc:
        raise ValidationFailed(f"invalid settings: {exc}", code="invalid_settings") from None
    if not _BCP47.match(settings.language):
        raise ValidationFailed(
            f"invalid settings: language {settings.language!r} is not a BCP-47 tag (e.g. zh-CN, en, ja)",
            code="invalid_settings",
        )
    if settings.story.enabled and not settings.story.model_config_id:
        raise ValidationFailed(
            "invalid settings: story.modelConfigId is required when the Story is on (a story object without "
            '"enabled": false turns it on)',
            code="invalid_settings",
        )
    _check_model_configs(settings, model_config_ids if model_config_ids is not None else _known_model_configs)
    return settings


def _story_on_when_given(raw: dict[str, Any] | None) -> dict[str, Any] | None:
    """The product seed's rule for ``storyV1``: on when the object is present and ``enabled`` is not
    false. So a ``story`` object that leaves ``enabled`` out turns the Story on (a PATCH that only
    changes other Story fields of a disabled Story says ``"enabled": false`` to keep it off)."""
    story = (raw or {}).get("story")
    if isinstance(story, dict) and "enabled" not in story:
        return {**raw, "story": {**story, "enabled": True}}  # type: ignore[dict-item]
    return raw


def dump_settings(settings: ConversationSettings) -> dict[str, Any]:
    return msgspec.to_builtins(settings)
