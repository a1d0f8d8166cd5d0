"""Prompt templates: package files with ``{{name}}`` / ``{{getvar::name}}`` variables.

Defaults ship as ``app/llm/prompts/<name>.md``; operators override them in ``[llm.prompts]``.
Each template declares the variables it must contain (an auto-reply prompt without
``{{getvar::language}}`` would answer in the wrong language) and the optional ones it may use,
so a broken override stops start-up with a ``SettingsError`` instead of degrading replies.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from importlib import resources

from app.errors import SettingsError
from story.auto_reply.text import is_chinese

_VARIABLE = re.compile(r"\{\{\s*(?:getvar::)?([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")

# name → (required variables, optional variables rendered as "" when not given). Only templates
# that a stage renders are listed: intent, emotion and selection build their prompts in
# ``scheduling/`` (their instructions are code, next to the schema they describe), so templates
# for them would be validated and never used; an override naming them is rejected at start-up.
TEMPLATE_VARIABLES: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "actor": (frozenset({"language", "characterName"}), frozenset({"personality", "scene"})),
    "cross_reply": (frozenset({"language", "characterName"}), frozenset({"personality", "scene"})),
    # Chinese conversations get the same prompts written in Chinese (``localized``); the language
    # is then a written-out line (``languageLine``: 请只用简体中文回复。) rather than a tag.
    "actor_zh": (frozenset({"characterName"}), frozenset({"personality", "scene", "languageLine", "language"})),
    "cross_reply_zh": (frozenset({"characterName"}), frozenset({"personality", "scene", "languageLine", "language"})),
    # The judge names the character it reviews; both optional so a language-only override stays valid.
    "quality": (frozenset({"language"}), frozenset({"characterName", "personality"})),
    "auto_reply": (frozenset({"language", "characterName"}), frozenset()),
}


def variables_in(text: str) -> set[str]:
    return set(_VARIABLE.findall(text))


def _default_text(name: str) -> str:
    return resources.files("app.llm").joinpath("prompts", f"{name}.md").read_text(encoding="utf-8")


class PromptTemplates:
    """All stage templates, defaults overlaid with the configured overrides."""

    def __init__(self, overrides: Mapping[str, str] | None = None) -> None:
        self._overrides = dict(overrides or {})
        self._texts = {name: self._overrides.get(name) or _default_text(name) for name in TEMPLATE_VARIABLES}

    def validate(self) -> None:
        """Start-up check: unknown override names, missing required or unknown variables."""
        for name in self._overrides:
            if name not in TEMPLATE_VARIABLES:
                raise SettingsError(f"llm.prompts.{name}", f"unknown template; expected one of {', '.join(TEMPLATE_VARIABLES)}")
        for name, text in self._texts.items():
            setting = f"llm.prompts.{name}" if name in self._overrides else f"app/llm/prompts/{name}.md"
            required, optional = TEMPLATE_VARIABLES[name]
            used = variables_in(text)
            missing = sorted(required - used)
            if missing:
                raise SettingsError(setting, "missing required variable(s) " + ", ".join(f"{{{{{v}}}}}" for v in missing))
            unknown = sorted(used - required - optional)
            if unknown:
                raise SettingsError(setting, "unknown variable(s) " + ", ".join(unknown))

    def text(self, name: str) -> str:
        if name not in self._texts:
            raise KeyError(f"no prompt template named {name!r}")
        return self._texts[name]

    def localized(self, name: str, language: str) -> str:
        """The template to render for ``language``: ``<name>_zh`` for Chinese when there is one,
        unless only ``<name>`` was overridden (an operator's own prompt wins in every language)."""
        local = f"{name}_zh"
        if not is_chinese(language) or local not in self._texts or (name in self._overrides and local not in self._overrides):
            return name
        return local

    def render(self, name: str, **variables: object) -> str:
        """Replace every variable; a missing required one is a ``SettingsError`` (a wiring bug)."""
        text = self.text(name)
        _, optional = TEMPLATE_VARIABLES[name]
        missing = sorted(v for v in variables_in(text) if v not in variables and v not in optional)
        if missing:
            raise SettingsError(f"llm.prompts.{name}", f"render is missing variable(s) {', '.join(missing)}")

        def replace(match: re.Match[str]) -> str:
            value = variables.get(match.group(1), "")
            return "" if value is None else str(value)

        return _VARIABLE.sub(replace, text).strip()
