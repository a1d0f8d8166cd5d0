import pytest

from app.errors import SettingsError
from app.llm.templates import TEMPLATE_VARIABLES, PromptTemplates


def test_default_templates_are_valid_and_auto_reply_uses_language_and_character():
    templates = PromptTemplates()
    templates.validate()
    text = templates.text("auto_reply")
    assert "{{getvar::language}}" in text and "{{characterName}}" in text
    assert set(TEMPLATE_VARIABLES) == {"actor", "cross_reply", "actor_zh", "cross_reply_zh", "quality", "auto_reply"}


def test_render_replaces_plain_and_getvar_variables():
    rendered = PromptTemplates().render("auto_reply", language="zh-CN", characterName="Mira")
    assert "zh-CN" in rendered and "Mira" in rendered and "{{" not in rendered


def test_optional_variables_render_empty_when_not_given():
    rendered = PromptTemplates().render("actor", language="en", characterName="Mira")
    assert "{{personality}}" not in rendered


def test_render_with_a_missing_variable_is_a_settings_error():
    with pytest.raises(SettingsError, match="characterName"):
        PromptTemplates().render("auto_reply", language="en")


def test_override_replaces_the_default():
    templates = PromptTemplates({"quality": "Judge it, in {{getvar::language}}."})
    templates.validate()
    assert templates.render("quality", language="ja") == "Judge it, in ja."


def test_override_missing_a_required_variable_fails_validation():
    templates = PromptTemplates({"auto_reply": "Suggest replies for {{characterName}}."})
    with pytest.raises(SettingsError) as info:
        templates.validate()
    assert info.value.setting == "llm.prompts.auto_reply"
    assert "language" in info.value.problem


def test_override_with_an_unknown_variable_fails_validation():
    with pytest.raises(SettingsError, match="mood"):
        PromptTemplates({"quality": "{{getvar::language}} {{mood}}"}).validate()


def test_override_of_an_unknown_template_fails_validation():
    with pytest.raises(SettingsError) as info:
        PromptTemplates({"poem": "x"}).validate()
    assert info.value.setting == "llm.prompts.poem"


@pytest.mark.parametrize("name", ["intent", "emotion", "select"])
def test_an_override_of_a_template_no_stage_renders_is_rejected(name):
    with pytest.raises(SettingsError, match="unknown template") as info:
        PromptTemplates({name: "{{getvar::language}}"}).validate()
    assert info.value.setting == f"llm.prompts.{name}"


def test_chinese_conversations_get_the_chinese_template_unless_only_the_english_one_is_overridden():
    templates = PromptTemplates()
    assert templates.localized("actor", "zh-CN") == "actor_zh" and templates.localized("actor", "zh-TW") == "actor_zh"
    assert templates.localized("actor", "en") == "actor" and templates.localized("quality", "zh-CN") == "quality"
    own = PromptTemplates({"actor": "Be {{characterName}} in {{getvar::language}}."})
    assert own.localized("actor", "zh-CN") == "actor"  # the operator's prompt wins in every language
    both = PromptTemplates({"actor": "x {{characterName}} {{language}}", "actor_zh": "你是{{characterName}}"})
    assert both.localized("actor", "zh-CN") == "actor_zh"
