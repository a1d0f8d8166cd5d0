import pytest

from app.errors import SettingsError
from app.llm.config import STAGES, load_llm_settings

SHORTCUT = {"COMPANION_LLM_BASE_URL": "http://127.0.0.1:8900/v1", "COMPANION_LLM_MODEL": "sim"}


def test_nothing_configured_leaves_every_stage_unconfigured():
    settings = load_llm_settings({}, {})
    assert settings.models == {}
    assert all(settings.model_for(stage) is None for stage in STAGES)


def test_an_api_key_alone_does_not_enable_a_model():
    assert load_llm_settings({"OPENAI_API_KEY": "sk-x"}, {}).models == {}


def test_shortcut_env_defines_the_default_config_for_every_stage():
    settings = load_llm_settings({**SHORTCUT, "COMPANION_LLM_API_KEY": "k"}, {})
    default = settings.models["default"]
    assert (default.base_url, default.model, default.api_key_env) == ("http://127.0.0.1:8900/v1", "sim", "COMPANION_LLM_API_KEY")
    assert settings.stages == dict.fromkeys(STAGES, "default")


def test_shortcut_key_falls_back_to_openai_api_key():
    settings = load_llm_settings({"COMPANION_LLM_MODEL": "gpt-x", "OPENAI_API_KEY": "sk"}, {})
    assert settings.models["default"].api_key_env == "OPENAI_API_KEY"
    assert settings.models["default"].base_url == "https://api.openai.com/v1"


def test_toml_models_and_stage_map_override_the_default_per_stage():
    toml = {"llm": {
        "models": {"fast": {"baseUrl": "http://localhost:1/v1", "model": "small", "structuredOutput": "json_object",
                            "timeoutMs": 5000, "temperature": 0.2, "maxTokens": 300}},
        "stages": {"emotion": "fast"},
        "prompts": {"intent": "Classify. {{getvar::language}}"},
    }}
    settings = load_llm_settings(SHORTCUT, toml)
    fast = settings.models["fast"]
    assert (fast.structured_output, fast.timeout_ms, fast.temperature, fast.max_tokens) == ("json_object", 5000, 0.2, 300)
    assert settings.stages["emotion"] == "fast"
    assert settings.stages["actor"] == "default"
    assert settings.prompts == {"intent": "Classify. {{getvar::language}}"}


def test_toml_only_maps_stages_explicitly_without_a_default():
    toml = {"llm": {"models": {"m": {"model": "x"}}, "stages": {"select": "m"}}}
    settings = load_llm_settings({}, toml)
    assert settings.model_for("select").id == "m"
    assert settings.model_for("actor") is None


@pytest.mark.parametrize(
    ("env", "toml", "setting"),
    [
        ({}, {"llm": {"models": {"fast": {"model": "x", "timeoutMs": 0}}}}, "llm.models.fast.timeoutMs"),
        ({}, {"llm": {"models": {"fast": {"model": "x", "timeoutMs": "soon"}}}}, "llm.models.fast.timeoutMs"),
        ({}, {"llm": {"models": {"fast": {"model": "x", "baseUrl": "ftp://x"}}}}, "llm.models.fast.baseUrl"),
        ({}, {"llm": {"models": {"fast": {"model": "x", "structuredOutput": "xml"}}}}, "llm.models.fast.structuredOutput"),
        ({}, {"llm": {"models": {"fast": {"model": "x", "temperature": 3}}}}, "llm.models.fast.temperature"),
        ({}, {"llm": {"models": {"fast": {"model": "x", "maxTokens": -1}}}}, "llm.models.fast.maxTokens"),
        ({}, {"llm": {"models": {"fast": {"model": "x", "colour": "red"}}}}, "llm.models.fast.colour"),
        ({}, {"llm": {"models": {"fast": {"baseUrl": "http://h/v1"}}}}, "llm.models.fast.model"),
        ({}, {"llm": {"models": {"fast": {"model": "x", "apiKeyEnv": "MISSING_KEY"}}}}, "llm.models.fast.apiKeyEnv"),
        ({}, {"llm": {"stages": {"dance": "fast"}}}, "llm.stages.dance"),
        ({}, {"llm": {"stages": {"actor": "nope"}}}, "llm.stages.actor"),
        ({}, {"llm": {"prompts": {"actor": ""}}}, "llm.prompts.actor"),
        ({}, {"llm": {"extra": 1}}, "llm.extra"),
        ({"COMPANION_LLM_BASE_URL": "http://h/v1"}, {}, "COMPANION_LLM_MODEL"),
        ({**SHORTCUT, "COMPANION_LLM_BASE_URL": "not a url"}, {}, "COMPANION_LLM_BASE_URL"),
        ({**SHORTCUT, "COMPANION_LLM_TIMEOUT_MS": "-5"}, {}, "COMPANION_LLM_TIMEOUT_MS"),
    ],
)
def test_invalid_settings_name_the_setting(env, toml, setting):
    with pytest.raises(SettingsError) as info:
        load_llm_settings(env, toml)
    assert info.value.setting == setting
    assert setting in str(info.value)


def test_models_stream_unless_their_config_says_stream_false():
    toml = {"llm": {"models": {"a": {"model": "x"}, "b": {"model": "y", "stream": False}}}}
    models = load_llm_settings({}, toml).models
    assert models["a"].stream is True and models["b"].stream is False


def test_the_shortcut_env_can_turn_streaming_off_for_the_default_config():
    assert load_llm_settings({**SHORTCUT, "COMPANION_LLM_STREAM": "false"}, {}).models["default"].stream is False
    assert load_llm_settings(SHORTCUT, {}).models["default"].stream is True


def test_a_stream_value_that_is_not_a_boolean_names_the_setting():
    with pytest.raises(SettingsError) as info:
        load_llm_settings({}, {"llm": {"models": {"fast": {"model": "x", "stream": "maybe"}}}})
    assert info.value.setting == "llm.models.fast.stream"


def test_retries_and_the_circuit_breaker_have_defaults_per_model_config():
    from app.llm.config import CircuitPolicy, RetryPolicy

    default = load_llm_settings(SHORTCUT, {}).models["default"]
    assert default.retry == RetryPolicy(max_attempts=4, base_delay_ms=250, max_delay_ms=4000)
    assert default.circuit == CircuitPolicy(failures=10, cooldown_ms=5_000)


def test_retry_and_circuit_tables_set_them_per_model_config():
    toml = {"llm": {"models": {"fast": {"model": "x", "retry": {"maxAttempts": 2, "baseDelayMs": 100, "maxDelayMs": 800},
                                        "circuit": {"failures": 3, "cooldownMs": 2000}},
                               "once": {"model": "y", "retry": {"maxAttempts": 1}, "circuit": {"failures": 0}}}}}
    models = load_llm_settings({}, toml).models
    fast, once = models["fast"], models["once"]
    assert (fast.retry.max_attempts, fast.retry.base_delay_ms, fast.retry.max_delay_ms) == (2, 100, 800)
    assert (fast.circuit.failures, fast.circuit.cooldown_ms) == (3, 2000)
    assert once.retry.max_attempts == 1 and once.retry.base_delay_ms == 250 and once.circuit.failures == 0


@pytest.mark.parametrize(("table", "setting", "words"), [
    ({"retry": {"maxAttempts": 0}}, "llm.models.fast.retry.maxAttempts", "between 1 and 10"),
    ({"retry": {"maxAttempts": "often"}}, "llm.models.fast.retry.maxAttempts", "integer"),
    ({"retry": {"baseDelayMs": -1}}, "llm.models.fast.retry.baseDelayMs", "between 0 and 60000"),
    ({"retry": {"baseDelayMs": 500, "maxDelayMs": 100}}, "llm.models.fast.retry.maxDelayMs", "at least baseDelayMs"),
    ({"retry": {"attempts": 3}}, "llm.models.fast.retry.attempts", "maxAttempts, baseDelayMs, maxDelayMs"),
    ({"retry": 3}, "llm.models.fast.retry", "must be a table"),
    ({"circuit": {"failures": -1}}, "llm.models.fast.circuit.failures", "between 0 and 1000"),
    ({"circuit": {"cooldownMs": 5}}, "llm.models.fast.circuit.cooldownMs", "between 100 and 3600000"),
])
def test_invalid_retry_and_circuit_settings_name_the_key(table, setting, words):
    with pytest.raises(SettingsError) as info:
        load_llm_settings({}, {"llm": {"models": {"fast": {"model": "x", **table}}}})
    assert info.value.setting == setting and words in info.value.problem


def test_the_readme_retry_and_circuit_example_loads_as_documented():
    import re
    import tomllib
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[3] / "README.md").read_text()
    section = readme.split("#### Transient model errors: retries and the circuit breaker", 1)[1]
    toml = tomllib.loads(re.search(r"```toml\n(.+?)\n```", section, re.DOTALL).group(1))
    toml["llm"]["models"]["default"]["model"] = "m"
    default = load_llm_settings({}, toml).models["default"]
    assert (default.retry.max_attempts, default.retry.base_delay_ms, default.retry.max_delay_ms) == (4, 250, 4000)
    assert (default.circuit.failures, default.circuit.cooldown_ms) == (10, 5_000)
