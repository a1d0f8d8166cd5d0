"""Issue 33: a circuit breaker per model config opens after N failed calls in a row, fails fast
while open, lets one probe through after the cool-down and closes when it succeeds."""

from __future__ import annotations

import asyncio

import pytest

from app.errors import ModelCircuitOpen, ModelUnavailable
from app.llm.circuit import MAX_COOLDOWN_FACTOR, CircuitBreaker
from app.llm.config import CircuitPolicy
from app.metrics import REGISTRY
from tests.unit.llm.test_llm_gateway import completion, request
from tests.unit.llm.test_model_retry import FakeTime, error, model_toml, timed_gateway

# one attempt per call, so each failing answer is one failed call
THREE = model_toml(retry={"maxAttempts": 1}, circuit={"failures": 3, "cooldownMs": 10_000})


def gauge(config_id: str = "default") -> float | None:
    return REGISTRY.get_sample_value("companion_model_circuit_open", {"model_config": config_id})


async def fail_calls(gw, count: int) -> None:
    for _ in range(count):
        with pytest.raises(ModelUnavailable):
            await gw.complete(request())


async def test_the_breaker_opens_after_n_failed_calls_in_a_row():
    gw, fake, _ = timed_gateway(error(500), toml=THREE)
    await fail_calls(gw, 2)
    assert gw.circuit_states() == {"default": "closed"} and gauge() == 0
    await fail_calls(gw, 1)
    assert gw.circuit_states() == {"default": "open"} and gauge() == 1


async def test_an_open_breaker_fails_fast_without_calling_the_client():
    gw, fake, time = timed_gateway(error(500), toml=THREE)
    await fail_calls(gw, 3)
    calls, before = len(fake.calls), REGISTRY.get_sample_value(
        "companion_model_circuit_rejections_total", {"model_config": "default"}) or 0  # fmt: skip
    time.now += 4
    with pytest.raises(ModelCircuitOpen) as info:
        await gw.complete(request())
    err = info.value
    assert len(fake.calls) == calls
    assert (err.code, err.retryable, err.status_code) == ("model_unavailable", True, 503)
    assert "circuit breaker is open" in err.message and "until" in err.message and "3 calls in a row" in err.message
    assert err.details["circuit"] == "open" and err.details["retryAfterS"] == 6.0 and err.details["openUntil"]
    assert REGISTRY.get_sample_value("companion_model_circuit_rejections_total", {"model_config": "default"}) == before + 1


async def test_an_open_breaker_fails_streams_fast_too():
    gw, fake, _ = timed_gateway(error(500), toml=THREE)
    await fail_calls(gw, 3)
    with pytest.raises(ModelCircuitOpen):
        await gw.stream(request("actor"), lambda piece: asyncio.sleep(0))
    assert len(fake.calls) == 3


async def test_a_call_counts_once_after_its_retries():
    gw, fake, _ = timed_gateway(error(500), toml=model_toml(circuit={"failures": 2}))
    await fail_calls(gw, 1)
    assert len(fake.calls) == 4 and gw.circuit_states()["default"] == "closed"
    await fail_calls(gw, 1)
    assert gw.circuit_states()["default"] == "open"


async def test_any_answer_from_the_server_ends_the_streak():
    gw, fake, _ = timed_gateway(error(500), error(500), error(400, "bad parameter"), error(500), error(500), completion(),
                                toml=THREE)  # fmt: skip
    await fail_calls(gw, 2)
    with pytest.raises(Exception):
        await gw.complete(request())  # a 400: the server is up
    await fail_calls(gw, 2)
    assert gw.circuit_states()["default"] == "closed"


async def test_after_the_cooldown_one_probe_is_let_through_and_its_success_closes_the_breaker():
    gw, fake, time = timed_gateway(error(500), error(500), error(500), completion("back"), toml=THREE)
    await fail_calls(gw, 3)
    time.now += 10
    assert gw.circuit_states()["default"] == "half_open"
    assert (await gw.complete(request())).text == "back"
    assert gw.circuit_states()["default"] == "closed" and gauge() == 0
    assert (await gw.complete(request())).text == "back"


async def test_a_failed_probe_opens_it_again_for_twice_the_cooldown():
    gw, fake, time = timed_gateway(error(500), toml=model_toml(circuit={"failures": 1, "cooldownMs": 10_000}))
    await fail_calls(gw, 1)  # four attempts, one failed call: open for 10 s
    assert len(fake.calls) == 4
    time.now += 10
    await fail_calls(gw, 1)  # the probe: a single attempt
    assert len(fake.calls) == 5 and gw.circuit_states()["default"] == "open"
    time.now += 10
    assert gw.circuit_states()["default"] == "open"
    time.now += 10
    assert gw.circuit_states()["default"] == "half_open"


def test_the_cooldown_doubles_only_up_to_its_cap():
    time = FakeTime()
    breaker = CircuitBreaker("m", CircuitPolicy(failures=1, cooldown_ms=1000), clock=time.clock)
    breaker.failed("5xx")
    for _ in range(10):
        time.now += breaker.cooldown_s
        assert breaker.admit() is True
        breaker.failed("5xx", probe=True)
    assert breaker.cooldown_s == MAX_COOLDOWN_FACTOR * 1.0
    time.now += breaker.cooldown_s
    assert breaker.admit() is True
    breaker.succeeded(probe=True)
    assert breaker.state() == "closed" and breaker.cooldown_s == 1.0


def test_while_the_probe_is_out_other_calls_fail_fast():
    time = FakeTime()
    breaker = CircuitBreaker("m", CircuitPolicy(failures=1, cooldown_ms=1000), clock=time.clock)
    breaker.failed("429")
    time.now += 1
    assert breaker.admit() is True
    with pytest.raises(ModelCircuitOpen) as info:
        breaker.admit()
    assert info.value.details["circuit"] == "half_open" and "probe" in info.value.message


async def test_a_cancelled_probe_lets_the_next_call_probe():
    gw, fake, time = timed_gateway(error(500), toml=THREE)
    await fail_calls(gw, 3)
    time.now += 10
    started = asyncio.Event()

    async def hang():
        started.set()
        await asyncio.sleep(10)

    fake.answer = lambda kwargs: hang()
    task = asyncio.create_task(gw.complete(request()))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    fake.answer = completion("back")
    assert (await gw.complete(request())).text == "back"
    assert gw.circuit_states()["default"] == "closed"


def test_failures_further_apart_than_the_window_do_not_add_up():
    from app.llm.circuit import WINDOW_S

    time = FakeTime()
    breaker = CircuitBreaker("m", CircuitPolicy(failures=3), clock=time.clock)
    for _ in range(5):
        breaker.failed("5xx")
        time.now += WINDOW_S / 2 + 1
    assert breaker.state() == "closed"


async def test_failures_0_turns_the_breaker_off():
    gw, _, _ = timed_gateway(error(500), toml=model_toml(retry={"maxAttempts": 1}, circuit={"failures": 0}))
    await fail_calls(gw, 20)
    assert gw.circuit_states()["default"] == "closed"


async def test_each_model_config_has_its_own_breaker():
    toml = {"llm": {"models": {"default": {"model": "m0", "retry": {"maxAttempts": 1}, "circuit": {"failures": 1}},
                               "other": {"model": "m1"}}}}
    gw, fake, _ = timed_gateway(error(500), toml=toml)
    await fail_calls(gw, 1)
    assert gw.circuit_states() == {"default": "open", "other": "closed"}
    fake.answer = completion("fine")
    assert (await gw.complete(request(model_config_id="other"))).text == "fine"
