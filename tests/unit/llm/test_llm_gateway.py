"""The adapter against a fake ``openai`` client: request shaping, error mapping, usage."""

import asyncio

import httpx2
import msgspec
import openai
import pytest
from openai.types.chat import ChatCompletion

from app.errors import ModelNotConfigured, ModelRefused, ModelTimeout, ModelUnavailable, UpstreamError
from app.llm.config import load_llm_settings
from app.llm.gateway import ModelGateway
from app.llm.port import ChatMessage, ModelRequest, ResponseSchema, Usage
from app.llm.structured import SCHEMA_PROMPT_MARKER

HTTP_REQUEST = httpx2.Request("POST", "http://127.0.0.1:1/v1/chat/completions")
SCHEMA = ResponseSchema("Pick", {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]})


def completion(content="hi", *, usage=True, finish_reason="stop", refusal=None) -> ChatCompletion:
    body = {
        "id": "c1", "object": "chat.completion", "created": 0, "model": "served-model",
        "choices": [{"index": 0, "finish_reason": finish_reason,
                     "message": {"role": "assistant", "content": content, "refusal": refusal}}],
    }
    if usage:
        body["usage"] = {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
    return ChatCompletion.model_validate(body)


def status_error(status: int, message: str = "boom", code: str | None = None) -> openai.APIStatusError:
    body = {"error": {"message": message, "code": code}}
    response = httpx2.Response(status, request=HTTP_REQUEST, json=body)
    return openai.APIStatusError(message, response=response, body=body["error"])


class FakeOpenAI:
    """Just enough of ``AsyncOpenAI``: ``chat.completions.create`` records kwargs and answers."""

    def __init__(self, answer):
        self.calls: list[dict] = []
        self.answer = answer
        self.chat = self
        self.completions = self

    async def create(self, **kwargs):
        self.calls.append(kwargs)
        answer = self.answer(kwargs) if callable(self.answer) else self.answer
        if isinstance(answer, BaseException):
            raise answer
        return await answer if asyncio.iscoroutine(answer) else answer


async def no_wait(seconds: float) -> None:
    """The retries' sleep in these tests: transient errors are retried at once."""


def gateway(answer, mode="json_schema", toml=None, **options):
    env = {"COMPANION_LLM_BASE_URL": "http://127.0.0.1:1/v1", "COMPANION_LLM_MODEL": "m1",
           "COMPANION_LLM_STRUCTURED_OUTPUT": mode, "COMPANION_LLM_API_KEY": "k"}
    fake = FakeOpenAI(answer)
    made = []

    def factory(config, key):
        made.append((config.id, key))
        return fake

    options.setdefault("sleep", no_wait)
    gw = ModelGateway(load_llm_settings(env, toml or {}), env=env, client_factory=factory, **options)
    return gw, fake, made


def request(purpose="select", schema=None, **kw) -> ModelRequest:
    return ModelRequest(messages=[ChatMessage("system", "Be brief."), ChatMessage("user", "hello")],
                        purpose=purpose, response_schema=schema, **kw)


async def test_plain_completion_returns_text_provider_usage_and_model():
    gw, fake, made = gateway(completion("hello there"))
    result = await gw.complete(request())
    assert (result.text, result.model, result.finish_reason) == ("hello there", "served-model", "stop")
    assert result.usage == Usage(11, 7, estimated=False)
    assert fake.calls[0]["model"] == "m1" and "response_format" not in fake.calls[0]
    assert made == [("default", "k")]


async def test_missing_provider_usage_is_estimated():
    gw, _, _ = gateway(completion("abcdefgh", usage=False))
    result = await gw.complete(request())
    assert result.usage == Usage(input_tokens=3 + 2, output_tokens=2, estimated=True)


async def test_one_client_per_model_config_is_reused():
    gw, _, made = gateway(completion())
    await gw.complete(request())
    await gw.complete(request("actor"))
    assert made == [("default", "k")]


async def test_json_schema_mode_sends_a_strict_response_format():
    gw, fake, _ = gateway(completion('{"id": "a"}'))
    await gw.complete(request(schema=SCHEMA))
    fmt = fake.calls[0]["response_format"]
    assert fmt == {"type": "json_schema", "json_schema": {"name": "Pick", "schema": SCHEMA.schema, "strict": True}}
    assert fake.calls[0]["messages"][0]["content"] == "Be brief."


@pytest.mark.parametrize(("mode", "expected_format"), [("json_object", {"type": "json_object"}), ("none", None)])
async def test_weaker_modes_put_the_schema_into_the_system_prompt(mode, expected_format):
    gw, fake, _ = gateway(completion('{"id": "a"}'), mode=mode)
    await gw.complete(request(schema=SCHEMA))
    assert fake.calls[0].get("response_format") == expected_format
    system = fake.calls[0]["messages"][0]
    assert system["role"] == "system" and system["content"].startswith("Be brief.")
    assert SCHEMA_PROMPT_MARKER in system["content"] and '"required":["id"]' in system["content"]


async def test_request_settings_win_over_config_settings():
    toml = {"llm": {"models": {"default": {"model": "m0", "temperature": 0.1, "maxTokens": 50, "timeoutMs": 9000}}}}
    gw, fake, _ = gateway(completion(), toml=toml)
    await gw.complete(request())
    assert (fake.calls[0]["temperature"], fake.calls[0]["max_tokens"], fake.calls[0]["timeout"]) == (0.1, 50, 9.0)
    await gw.complete(request(temperature=0.9, max_tokens=5, timeout_s=2.0))
    assert (fake.calls[1]["temperature"], fake.calls[1]["max_tokens"], fake.calls[1]["timeout"]) == (0.9, 5, 2.0)
    assert "presence_penalty" not in fake.calls[1] and "frequency_penalty" not in fake.calls[1]  # sent only when set
    await gw.complete(request(presence_penalty=1.0, frequency_penalty=0.5))
    assert (fake.calls[2]["presence_penalty"], fake.calls[2]["frequency_penalty"]) == (1.0, 0.5)


async def test_stage_is_the_first_segment_of_the_purpose_unless_a_config_is_named():
    toml = {"llm": {"models": {"planner": {"model": "big"}}, "stages": {"story": "planner"}}}
    gw, fake, made = gateway(completion(), toml=toml)
    await gw.complete(request("story.plan_cycle"))
    await gw.complete(request("story.plan_cycle", model_config_id="default"))
    assert [c["model"] for c in fake.calls] == ["big", "m1"]


async def test_unconfigured_stage_raises_model_not_configured():
    gw = ModelGateway(load_llm_settings({}, {}), env={})
    assert not gw.is_configured("actor")
    with pytest.raises(ModelNotConfigured) as info:
        await gw.complete(request("actor"))
    assert info.value.stage == "actor" and info.value.status_code == 503


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (openai.APITimeoutError(request=HTTP_REQUEST), ModelTimeout),
        (openai.APIConnectionError(request=HTTP_REQUEST), ModelUnavailable),
        (status_error(429, "slow down"), ModelUnavailable),
        (status_error(500), ModelUnavailable),
        (status_error(503), ModelUnavailable),
        (status_error(400, "blocked", code="content_filter"), ModelRefused),
        (status_error(400, "Your request was rejected by our safety system"), ModelRefused),
        (status_error(401, "bad key"), ModelUnavailable),
        (status_error(400, "bad parameter"), UpstreamError),
    ],
)
async def test_openai_errors_map_to_the_error_tree(error, expected):
    gw, _, _ = gateway(error)
    with pytest.raises(expected) as info:
        await gw.complete(request())
    assert type(info.value) is expected
    assert info.value.details["modelConfig"] == "default"


async def test_auth_failures_are_not_retryable():
    gw, _, _ = gateway(status_error(401, "bad key"))
    with pytest.raises(ModelUnavailable) as info:
        await gw.complete(request())
    assert info.value.retryable is False


@pytest.mark.parametrize("answer", [completion(None, refusal="I can't help with that"), completion("x", finish_reason="content_filter")])
async def test_refusals_in_the_response_raise_model_refused(answer):
    gw, _, _ = gateway(answer)
    with pytest.raises(ModelRefused):
        await gw.complete(request())


async def test_empty_content_is_returned_for_complete_struct_to_judge():
    gw, _, _ = gateway(completion(None))
    assert (await gw.complete(request())).text == ""


async def test_overall_deadline_raises_model_timeout():
    async def never():
        await asyncio.sleep(10)

    gw, _, _ = gateway(lambda kw: never())
    with pytest.raises(ModelTimeout):
        await gw.complete(request(timeout_s=0.05))


async def test_cancellation_propagates_into_the_http_call():
    started, cancelled = asyncio.Event(), asyncio.Event()

    async def slow():
        started.set()
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    gw, _, _ = gateway(lambda kw: slow())
    task = asyncio.create_task(gw.complete(request()))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert cancelled.is_set()


async def test_library_request_structs_with_the_same_fields_are_accepted():
    class Msg(msgspec.Struct):
        role: str
        content: str

    class LibRequest(msgspec.Struct):
        messages: list[Msg]
        purpose: str

    gw, fake, _ = gateway(completion())
    await gw.complete(LibRequest([Msg("user", "hi")], "emotion"))
    assert fake.calls[0]["messages"] == [{"role": "user", "content": "hi"}]


def test_default_client_never_retries_on_its_own():
    from app.llm.config import ModelConfig
    from app.llm.gateway import default_client_factory

    client = default_client_factory(ModelConfig(id="x", base_url="http://127.0.0.1:1/v1", model="m", timeout_ms=1500), "k")
    assert client.max_retries == 0 and client.timeout == 1.5


async def test_the_config_budget_caps_a_larger_request_budget():
    toml = {"llm": {"models": {"default": {"model": "m0", "maxTokens": 64}}}}
    gw, fake, _ = gateway(completion(), toml=toml)
    await gw.complete(request(max_tokens=900))
    assert fake.calls[0]["max_tokens"] == 64


@pytest.mark.parametrize("message", [
    "request (4134 tokens) exceeds the available context size (4096 tokens), try increasing it",
    "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens",
])
async def test_a_context_overflow_is_its_own_named_error(message):
    from app.errors import ModelContextOverflow

    gw, _, _ = gateway(status_error(400, message))
    with pytest.raises(ModelContextOverflow) as info:
        await gw.complete(request())
    assert info.value.code == "model_context_overflow" and "maxTokens" in info.value.message


@pytest.mark.parametrize(("message", "setting"), [
    ("'response_format' of type 'json_schema' is not supported", "structuredOutput"),
    ("Unsupported parameter: 'max_tokens' is not supported with this model", "maxTokens"),
    ("Unsupported value: 'temperature' does not support 0.0", "temperature"),
])
async def test_a_rejected_parameter_names_the_setting_to_change(message, setting):
    gw, _, _ = gateway(status_error(400, message))
    with pytest.raises(UpstreamError) as info:
        await gw.complete(request())
    assert info.value.code == "model_request_rejected" and f"llm.models.default.{setting}" in info.value.message
