"""``ModelGateway.stream`` against a fake ``openai`` client: deltas, usage, the config switch and the
same error tree as ``complete``, before and during the stream."""

import asyncio

import openai
import pytest
from openai.types.chat import ChatCompletionChunk

from app.errors import ModelContextOverflow, ModelRefused, ModelTimeout, ModelUnavailable, UpstreamError
from app.llm.port import Usage
from tests.unit.llm.test_llm_gateway import HTTP_REQUEST, completion, gateway, request, status_error


def chunk(content=None, *, finish=None, usage=None, choices=True, refusal=None, role=None) -> ChatCompletionChunk:
    body = {"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": "served-model", "choices": []}
    if choices:
        delta = {"content": content, "refusal": refusal}
        if role:
            delta["role"] = role
        body["choices"] = [{"index": 0, "delta": delta, "finish_reason": finish}]
    if usage:
        body["usage"] = {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)}
    return ChatCompletionChunk.model_validate(body)


class FakeStream:
    """Just enough of ``AsyncStream``: yields chunks (an exception in the list is raised there)."""

    def __init__(self, items, delay_s=0.0):
        self.items = items
        self.delay_s = delay_s
        self.closed = False

    async def __aiter__(self):
        for item in self.items:
            await asyncio.sleep(self.delay_s)
            if isinstance(item, BaseException):
                raise item
            yield item

    async def close(self):
        self.closed = True


def streamed(*items, delay_s=0.0):
    """An answer for the fake client: a stream for ``stream=True`` calls, else a plain completion."""
    stream = FakeStream(list(items), delay_s)

    def answer(kwargs):
        if kwargs.get("stream"):
            return stream
        text = "".join(i.choices[0].delta.content or "" for i in items if isinstance(i, ChatCompletionChunk) and i.choices)
        return completion(text)

    answer.stream = stream
    return answer


HELLO = (chunk("", role="assistant"), chunk("Hel"), chunk("lo, "), chunk("you"), chunk(finish="stop"),
         chunk(choices=False, usage=(11, 3)))


class Deltas(list):
    async def __call__(self, piece: str) -> None:
        self.append(piece)


async def test_each_piece_reaches_on_delta_and_the_result_is_what_complete_returns():
    answer = streamed(*HELLO)
    gw, fake, _ = gateway(answer)
    deltas = Deltas()
    result = await gw.stream(request("actor"), deltas)
    assert deltas == ["Hel", "lo, ", "you"]
    assert (result.text, result.model, result.finish_reason) == ("Hello, you", "served-model", "stop")
    assert result.usage == Usage(11, 3, estimated=False)
    assert result.first_token_ms is not None and result.first_token_ms >= 0
    assert fake.calls[0]["stream"] is True and fake.calls[0]["stream_options"] == {"include_usage": True}
    assert answer.stream.closed
    plain = await gw.complete(request("actor"))
    assert plain.text == result.text and plain.first_token_ms is None


async def test_the_stream_sends_the_same_request_as_complete():
    toml = {"llm": {"models": {"default": {"model": "m0", "temperature": 0.1, "maxTokens": 50, "timeoutMs": 9000}}}}
    gw, fake, _ = gateway(streamed(*HELLO), toml=toml)
    await gw.complete(request("actor", max_tokens=20))
    await gw.stream(request("actor", max_tokens=20), Deltas())
    plain, stream = fake.calls
    assert {k: v for k, v in stream.items() if k not in ("stream", "stream_options")} == plain


async def test_first_token_ms_counts_until_the_first_non_empty_delta():
    gw, _, _ = gateway(streamed(*HELLO, delay_s=0.02))
    result = await gw.stream(request("actor"), Deltas())
    assert result.first_token_ms >= 2 * 20 * 0.9  # the role chunk with "" does not count


async def test_a_stream_without_usage_gets_an_estimate_marked_estimated():
    gw, _, _ = gateway(streamed(chunk("abcdefgh"), chunk(finish="stop")))
    result = await gw.stream(request("actor"), Deltas())
    assert result.usage == Usage(input_tokens=3 + 2, output_tokens=2, estimated=True)


async def test_a_cut_off_answer_keeps_its_finish_reason():
    gw, _, _ = gateway(streamed(chunk("abc"), chunk(finish="length")))
    assert (await gw.stream(request("actor"), Deltas())).finish_reason == "length"


async def test_stream_false_in_the_config_makes_one_plain_call_and_one_delta():
    toml = {"llm": {"models": {"default": {"model": "m0", "stream": False}}}}
    gw, fake, _ = gateway(streamed(*HELLO), toml=toml)
    deltas = Deltas()
    result = await gw.stream(request("actor"), deltas)
    assert deltas == ["Hello, you"] and result.text == "Hello, you" and result.first_token_ms is None
    assert "stream" not in fake.calls[0]


@pytest.mark.parametrize(("exc", "expected"), [
    (status_error(500), ModelUnavailable),
    (status_error(429), ModelUnavailable),
    (status_error(400, "bad parameter"), UpstreamError),
    (openai.APITimeoutError(request=HTTP_REQUEST), ModelTimeout),
    (openai.APIConnectionError(request=HTTP_REQUEST), ModelUnavailable),
])
async def test_an_error_before_the_stream_starts_maps_like_complete(exc, expected):
    gw, _, _ = gateway(exc)
    deltas = Deltas()
    with pytest.raises(expected) as streamed_error:
        await gw.stream(request("actor"), deltas)
    with pytest.raises(expected) as plain_error:
        await gw.complete(request("actor"))
    assert type(streamed_error.value) is type(plain_error.value) and deltas == []


@pytest.mark.parametrize(("exc", "expected"), [
    (openai.APIConnectionError(request=HTTP_REQUEST), ModelUnavailable),  # the connection dropped
    (openai.APITimeoutError(request=HTTP_REQUEST), ModelTimeout),  # a read stalled past the timeout
    (openai.APIError("server crashed", request=HTTP_REQUEST, body=None), ModelUnavailable),  # an error event
    (openai.APIError("context length exceeded", request=HTTP_REQUEST, body=None), ModelContextOverflow),
])
async def test_a_failure_mid_stream_raises_the_named_error_after_the_deltas_sent(exc, expected):
    answer = streamed(chunk("Hel"), chunk("lo"), exc)
    gw, _, _ = gateway(answer)
    deltas = Deltas()
    with pytest.raises(expected):
        await gw.stream(request("actor"), deltas)
    assert deltas == ["Hel", "lo"] and answer.stream.closed


async def test_a_stream_that_ends_without_a_finish_reason_is_unavailable():
    gw, _, _ = gateway(streamed(chunk("Hel"), chunk("lo")))
    with pytest.raises(ModelUnavailable, match="stream ended"):
        await gw.stream(request("actor"), Deltas())


async def test_the_overall_deadline_covers_a_trickling_stream():
    gw, _, _ = gateway(streamed(*(chunk("x") for _ in range(50)), chunk(finish="stop"), delay_s=0.02))
    with pytest.raises(ModelTimeout):
        await gw.stream(request("actor", timeout_s=0.2), Deltas())


@pytest.mark.parametrize("items", [
    (chunk(refusal="I can't help with that"), chunk(finish="stop")),
    (chunk("Hel"), chunk(finish="content_filter")),
])
async def test_a_refusal_in_the_stream_is_model_refused(items):
    gw, _, _ = gateway(streamed(*items))
    with pytest.raises(ModelRefused):
        await gw.stream(request("actor"), Deltas())


async def test_an_error_in_on_delta_propagates_unchanged_and_closes_the_stream():
    answer = streamed(*HELLO)
    gw, _, _ = gateway(answer)

    async def fails(piece):
        raise KeyError("consumer")

    with pytest.raises(KeyError):
        await gw.stream(request("actor"), fails)
    assert answer.stream.closed


async def test_cancelling_the_caller_aborts_the_stream():
    answer = streamed(*(chunk("x") for _ in range(100)), chunk(finish="stop"), delay_s=0.01)
    gw, _, _ = gateway(answer)
    deltas = Deltas()
    task = asyncio.create_task(gw.stream(request("actor"), deltas))
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert answer.stream.closed and 0 < len(deltas) < 100
