"""Issue 33: transient model errors are retried with jittered backoff within the call's deadline;
everything else is raised at once. A fake ``openai`` client, a fake clock and sleep: no waiting."""

from __future__ import annotations

import asyncio
import random

import httpx2
import openai
import pytest

from app.errors import ModelContextOverflow, ModelRefused, ModelTimeout, ModelUnavailable, UpstreamError
from app.llm.config import RetryPolicy
from app.llm.port import Usage
from app.llm.retry import backoff_s, model_deadline, parse_retry_after
from app.metrics import REGISTRY
from tests.unit.llm.test_llm_gateway import HTTP_REQUEST, completion, gateway, request
from tests.unit.llm.test_llm_gateway_stream import HELLO, Deltas, FakeStream, chunk


class FakeTime:
    """A monotonic clock that only moves when the retries sleep."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def error(status: int, message: str = "boom", headers: dict[str, str] | None = None, code: str | None = None):
    body = {"error": {"message": message, "code": code}}
    response = httpx2.Response(status, request=HTTP_REQUEST, json=body, headers=headers or {})
    return openai.APIStatusError(message, response=response, body=body["error"])


def script(*answers):
    """Answers in order, one per call (the last one repeats); a list of chunks is a stream."""
    queue = list(answers)

    def answer(kwargs):
        item = queue.pop(0) if len(queue) > 1 else queue[0]
        return FakeStream(list(item)) if isinstance(item, tuple) else item

    return answer


def timed_gateway(*answers, toml=None, seed=7):
    time = FakeTime()
    gw, fake, _ = gateway(script(*answers), toml=toml, clock=time.clock, sleep=time.sleep, rng=random.Random(seed))
    return gw, fake, time


def model_toml(**fields):
    return {"llm": {"models": {"default": {"model": "m0", **fields}}}}


def retries_counted(reason: str) -> float:
    return REGISTRY.get_sample_value("companion_model_call_retries_total", {"model_config": "default", "reason": reason}) or 0.0


async def test_a_429_is_retried_after_the_servers_retry_after():
    before = retries_counted("429")
    gw, fake, time = timed_gateway(error(429, "slow down", {"retry-after": "2"}), completion("made it"))
    result = await gw.complete(request())
    assert result.text == "made it" and result.retries == 1
    assert time.sleeps == [2.0] and len(fake.calls) == 2
    assert retries_counted("429") == before + 1


async def test_retry_after_ms_is_honoured_too():
    gw, _, time = timed_gateway(error(429, headers={"retry-after-ms": "1500"}), completion())
    await gw.complete(request())
    assert time.sleeps == [1.5]


async def test_a_retry_after_longer_than_the_longest_wait_ends_the_retries():
    gw, fake, time = timed_gateway(error(429, headers={"retry-after": "30"}), completion())
    with pytest.raises(ModelUnavailable) as info:
        await gw.complete(request())
    assert len(fake.calls) == 1 and time.sleeps == []
    assert info.value.details["retryStopped"] == "retry_after_too_long" and info.value.details["retryAfterS"] == 30


async def test_a_500_then_a_success_waits_a_jittered_backoff():
    gw, fake, time = timed_gateway(error(500), completion("ok"))
    result = await gw.complete(request())
    assert result.text == "ok" and result.retries == 1 and len(fake.calls) == 2
    assert len(time.sleeps) == 1 and 0 <= time.sleeps[0] <= 0.25


@pytest.mark.parametrize("exc", [
    error(408), error(502), error(503), error(504), openai.APIConnectionError(request=HTTP_REQUEST),
])
async def test_other_transient_errors_are_retried(exc):
    gw, fake, _ = timed_gateway(exc, completion("ok"))
    assert (await gw.complete(request())).text == "ok" and len(fake.calls) == 2


def test_the_backoff_is_full_jitter_doubling_to_its_cap():
    class Top(random.Random):
        def uniform(self, a, b):
            return b

    policy = RetryPolicy(max_attempts=8, base_delay_ms=250, max_delay_ms=4000)
    assert [backoff_s(policy, n, Top()) for n in range(1, 8)] == [0.25, 0.5, 1.0, 2.0, 4.0, 4.0, 4.0]
    rng = random.Random(1)
    assert all(0 <= backoff_s(policy, 3, rng) <= 1.0 for _ in range(200))


async def test_the_waits_are_deterministic_for_a_seeded_random():
    runs = []
    for _ in range(2):
        gw, _, time = timed_gateway(error(500), error(500), error(500), completion(), seed=3)
        await gw.complete(request())
        runs.append(time.sleeps)
    assert runs[0] == runs[1] and len(runs[0]) == 3


async def test_retries_stop_after_max_attempts_with_the_count_on_the_error():
    gw, fake, time = timed_gateway(error(500))
    with pytest.raises(ModelUnavailable) as info:
        await gw.complete(request())
    assert len(fake.calls) == 4 and len(time.sleeps) == 3
    assert info.value.details["attempts"] == 4 and info.value.details["retryStopped"] == "max_attempts"
    assert info.value.message.endswith("(after 4 attempts)") and info.value.details["status"] == 500


async def test_max_attempts_1_turns_retries_off():
    gw, fake, _ = timed_gateway(error(500), completion(), toml=model_toml(retry={"maxAttempts": 1}))
    with pytest.raises(ModelUnavailable):
        await gw.complete(request())
    assert len(fake.calls) == 1


async def test_retries_stop_at_the_calls_deadline_and_each_gets_what_is_left():
    gw, fake, time = timed_gateway(error(503, headers={"retry-after": "0.4"}), toml=model_toml(retry={"maxAttempts": 10}))
    started = time.now
    with pytest.raises(ModelUnavailable) as info:
        await gw.complete(request(timeout_s=1.0))
    # 0 s, 0.4 s, 0.8 s; a fourth attempt would start at 1.2 s, past the 1 s deadline
    assert len(fake.calls) == 3 and time.sleeps == [0.4, 0.4]
    assert time.now - started <= 1.0
    assert [round(c["timeout"], 3) for c in fake.calls] == [1.0, 0.6, 0.2]
    assert info.value.details["retryStopped"] == "deadline"


async def test_a_backoff_is_shortened_to_leave_room_for_the_retry():
    gw, fake, time = timed_gateway(error(500), completion("ok"), toml=model_toml(retry={"baseDelayMs": 5000, "maxDelayMs": 5000}))
    assert (await gw.complete(request(timeout_s=1.0))).text == "ok"
    assert len(time.sleeps) == 1 and time.sleeps[0] <= 0.9  # 1 s less the 0.1 s an attempt needs


async def test_a_timeout_that_used_the_whole_deadline_is_not_retried():
    async def never():
        await asyncio.sleep(10)

    gw, fake, _ = gateway(lambda kw: never())
    with pytest.raises(ModelTimeout) as info:
        await gw.complete(request(timeout_s=0.05))
    assert len(fake.calls) == 1 and info.value.details["retryStopped"] == "deadline"


async def test_a_retry_does_not_outlive_the_callers_asyncio_timeout():
    gw, fake, time = timed_gateway(error(429, headers={"retry-after": "1"}), completion())
    with pytest.raises(ModelUnavailable) as info:
        async with asyncio.timeout(0.5):
            await gw.complete(request())
    assert len(fake.calls) == 1 and time.sleeps == [] and info.value.details["retryStopped"] == "deadline"


async def test_model_deadline_reaches_model_calls_in_tasks_started_under_it():
    gw, fake, time = timed_gateway(error(429, headers={"retry-after": "1"}), completion())
    with pytest.raises(ModelUnavailable):
        async with model_deadline(0.5):
            await asyncio.create_task(gw.complete(request()))
    assert len(fake.calls) == 1 and time.sleeps == []


@pytest.mark.parametrize(("exc", "expected"), [
    (error(400, "bad parameter"), UpstreamError),
    (error(401, "bad key"), ModelUnavailable),
    (error(403, "forbidden"), ModelUnavailable),
    (error(404, "no such model"), ModelUnavailable),
    (error(400, "maximum context length is 8192 tokens"), ModelContextOverflow),
    (error(400, "blocked", code="content_filter"), ModelRefused),
    (completion(None, refusal="I can't help with that"), ModelRefused),
])
async def test_non_transient_errors_are_raised_at_once(exc, expected):
    gw, fake, time = timed_gateway(exc, completion("never asked"))
    with pytest.raises(expected) as info:
        await gw.complete(request())
    assert len(fake.calls) == 1 and time.sleeps == []
    assert "attempts" not in info.value.details


async def test_invalid_output_from_a_200_is_left_to_the_repair_loop():
    gw, fake, _ = timed_gateway(completion("{not json"), completion("{}"))
    assert (await gw.complete(request())).text == "{not json" and len(fake.calls) == 1


# -- streams ------------------------------------------------------------------------------------


async def test_a_stream_cut_before_its_first_delta_is_retried_transparently():
    before = retries_counted("stream_cut")
    gw, fake, _ = timed_gateway((chunk("", role="assistant"),), HELLO)
    deltas = Deltas()
    result = await gw.stream(request("actor"), deltas)
    assert deltas == ["Hel", "lo, ", "you"] and result.text == "Hello, you" and result.retries == 1
    assert len(fake.calls) == 2 and retries_counted("stream_cut") == before + 1


async def test_a_status_error_before_the_stream_is_retried():
    gw, fake, _ = timed_gateway(error(500), HELLO)
    deltas = Deltas()
    assert (await gw.stream(request("actor"), deltas)).text == "Hello, you" and deltas == ["Hel", "lo, ", "you"]


async def test_a_stream_cut_after_its_first_delta_is_not_retried():
    gw, fake, time = timed_gateway((chunk("Hel"), chunk("lo")), HELLO)
    deltas = Deltas()
    with pytest.raises(ModelUnavailable, match="stream ended") as info:
        await gw.stream(request("actor"), deltas)
    assert deltas == ["Hel", "lo"] and len(fake.calls) == 1 and time.sleeps == []
    assert info.value.details["retryStopped"] == "deltas_sent"


async def test_an_error_event_after_a_delta_is_not_retried():
    gw, fake, _ = timed_gateway((chunk("Hel"), openai.APIError("server crashed", request=HTTP_REQUEST, body=None)), HELLO)
    with pytest.raises(ModelUnavailable, match="mid-stream"):
        await gw.stream(request("actor"), Deltas())
    assert len(fake.calls) == 1


async def test_an_empty_stream_is_asked_again_and_its_tokens_still_count():
    empty = (chunk("", role="assistant"), chunk(finish="stop"), chunk(choices=False, usage=(10, 0)))
    gw, fake, _ = timed_gateway(empty, HELLO)
    result = await gw.stream(request("actor"), Deltas())
    assert result.text == "Hello, you" and result.retries == 1
    assert result.usage == Usage(input_tokens=21, output_tokens=3)


async def test_an_empty_stream_is_returned_as_before_when_no_retry_is_left():
    empty = (chunk("", role="assistant"), chunk(finish="stop"), chunk(choices=False, usage=(10, 0)))
    gw, fake, _ = timed_gateway(empty, toml=model_toml(retry={"maxAttempts": 2}))
    result = await gw.stream(request("actor"), Deltas())
    assert result.text == "" and result.finish_reason == "stop" and result.retries == 1
    assert result.usage == Usage(input_tokens=20, output_tokens=0) and len(fake.calls) == 2


async def test_a_consumer_error_is_not_retried():
    gw, fake, _ = timed_gateway(HELLO)

    async def fails(piece):
        raise KeyError("consumer")

    with pytest.raises(KeyError):
        await gw.stream(request("actor"), fails)
    assert len(fake.calls) == 1


# -- Retry-After parsing ------------------------------------------------------------------------


@pytest.mark.parametrize(("headers", "seconds"), [
    ({"retry-after": "3"}, 3.0),
    ({"retry-after": "0.5"}, 0.5),
    ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),
    ({"retry-after": "Thu, 01 Jan 1970 00:00:12 GMT"}, 2.0),  # an HTTP date, "now" being 10 s after the epoch
    ({"retry-after": "soon"}, None),
    ({}, None),
])
def test_retry_after_headers_are_read_in_seconds(headers, seconds):
    assert parse_retry_after(headers, now=10.0) == seconds
