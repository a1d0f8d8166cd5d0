"""Config ranges, the system-prompt template, conservative options, and library isolation."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import msgspec
import pytest

from story.auto_reply import (
    DEFAULT_TEMPLATE,
    AutoReplyConfig,
    AutoReplyConfigInvalid,
    TemplateError,
    check_options,
    check_template,
    conservative_options,
    format_numbered,
    render_system_prompt,
    validate_config,
)

ROOT = Path(__file__).resolve().parents[3]


def test_defaults_match_the_spec():
    c = validate_config({})
    assert (c.enabled, c.model_config_id, c.suggestion_count, c.context_message_count) == (True, None, 3, 6)
    assert (c.max_suggestion_chars, c.max_tokens, c.timeout_ms, c.temperature, c.fallback) == (160, 384, 15000, 0.7, "none")


def test_config_json_is_camel_case_both_ways():
    c = validate_config(b'{"suggestionCount": 4, "maxSuggestionChars": 300, "fallback": "conservative"}')
    assert (c.suggestion_count, c.max_suggestion_chars, c.fallback) == (4, 300, "conservative")
    assert b'"contextMessageCount":6' in msgspec.json.encode(c)


@pytest.mark.parametrize(
    ("field", "low", "high"),
    [("suggestionCount", 2, 4), ("contextMessageCount", 2, 6), ("maxSuggestionChars", 32, 300),
     ("maxTokens", 64, 1024), ("timeoutMs", 1000, 30000), ("temperature", 0, 2)],
)
def test_each_range_accepts_its_bounds_and_rejects_just_outside(field, low, high):
    validate_config({field: low})
    validate_config({field: high})
    step = 0.1 if field == "temperature" else 1
    for bad in (low - step, high + step):
        with pytest.raises(AutoReplyConfigInvalid) as info:
            validate_config({field: bad})
        assert list(info.value.problems) == [field]
        assert f"between {low} and {high}" in str(info.value)


def test_every_bad_field_is_listed_at_once_also_when_built_in_code():
    with pytest.raises(AutoReplyConfigInvalid) as info:
        AutoReplyConfig(suggestion_count=5, timeout_ms=10, temperature=3.0, fallback="canned")
    assert set(info.value.problems) == {"suggestionCount", "timeoutMs", "temperature", "fallback"}
    assert info.value.code == "auto_reply_config_invalid"


def test_unknown_fields_and_wrong_types_are_typed_config_errors():
    with pytest.raises(AutoReplyConfigInvalid) as info:
        validate_config({"suggestionCount": 3, "tone": "cheerful"})
    assert info.value.problems == {"tone": "is not a known field"}
    with pytest.raises(AutoReplyConfigInvalid) as info:
        validate_config('{"maxTokens": "lots"}')
    assert list(info.value.problems) == ["maxTokens"]


def test_nested_decoding_reports_the_range_error_as_a_msgspec_validation_error():
    class Settings(msgspec.Struct, rename="camel"):
        auto_reply: AutoReplyConfig

    with pytest.raises(msgspec.ValidationError, match=r"suggestionCount must be between 2 and 4") as info:
        msgspec.json.decode(b'{"autoReply": {"suggestionCount": 9}}', type=Settings)
    assert isinstance(info.value.__cause__, AutoReplyConfigInvalid)


def test_default_template_has_both_variables_and_renders_them():
    check_template(DEFAULT_TEMPLATE)
    text = render_system_prompt(DEFAULT_TEMPLATE, "ja-JP", "Aoi {{getvar::language}}")
    assert "Japanese (ja-JP)" in text and "Aoi {{getvar::language}}" in text
    assert "{{characterName}}" not in text


@pytest.mark.parametrize(
    ("template", "missing"),
    [("Suggest replies to {{characterName}}.", ["{{getvar::language}}"]),
     ("Reply in {{getvar::language}}.", ["{{characterName}}"]),
     ("", ["{{getvar::language}}", "{{characterName}}"])],
)
def test_template_missing_a_variable_is_a_template_error(template, missing):
    with pytest.raises(TemplateError) as info:
        check_template(template)
    assert info.value.missing == missing


def test_template_with_a_variable_we_cannot_fill_is_a_template_error():
    with pytest.raises(TemplateError) as info:
        check_template("{{getvar::language}} {{characterName}} {{user}}")
    assert info.value.unknown == ["{{user}}"]


def test_numbered_format_is_one_line_per_option():
    assert format_numbered(["a", "b", "c"]) == "1: a\n2: b\n3: c"


@pytest.mark.parametrize("language", ["zh-CN", "en", "ja", "ko-KR", "fr", "de-DE", "xx"])
@pytest.mark.parametrize("count", [2, 3, 4])
@pytest.mark.parametrize("max_chars", [32, 160])
def test_conservative_options_pass_the_same_validation(language, count, max_chars):
    anchor = "The guard holds out his hand and asks where your travel pass from the capital is?"
    options = conservative_options(language, count=count, max_chars=max_chars,
                                   character_name="Guard Captain Aldric of the North Gate", anchor_text=anchor)
    check_lang = language if language[:2] in ("zh", "ja", "ko") else "en"
    result = check_options(options, count=count, max_chars=max_chars, language=check_lang,
                           speaker_names=["Guard Captain Aldric of the North Gate"], anchor_text=anchor)
    assert result.ok, result.problems


def test_conservative_clarifying_question_quotes_the_anchor_topic():
    options = conservative_options("en", count=3, max_chars=160, character_name="Mira", anchor_text="Look at the sky. Do you see it?")
    assert options == ["Go on, Mira, I'm listening.", 'What do you mean by "Do you see it"?', "Let me think about that for a moment."]


def test_library_imports_with_app_and_frameworks_blocked():
    script = textwrap.dedent(
        """
        import sys
        class Block:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in {"litestar", "sqlalchemy", "openai", "app"}:
                    raise ImportError("blocked: " + name)
        sys.meta_path.insert(0, Block())
        import story.auto_reply
        loaded = {m.split(".")[0] for m in sys.modules}
        assert not loaded & {"litestar", "sqlalchemy", "openai", "app"}, loaded
        print("ok")
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"


def test_app_style_template_spellings_are_accepted():
    text = render_system_prompt("Talk to {{ getvar::characterName }} in {{getvar::language}}.", "en", "Mira")
    assert text == "Talk to Mira in English (en)."
    with pytest.raises(TemplateError):
        check_template("Talk to {{characterName}} in {{language}}.")
