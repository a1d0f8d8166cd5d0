import msgspec
import openai
import pytest

from app.errors import ModelRefused
from app.llm.fakes import FunctionModel, NetworkModelCallBlocked, NothingQueued, ScriptedModel, block_network_models
from app.llm.port import ChatMessage, ModelRequest, ModelResult, Usage


def request(purpose: str) -> ModelRequest:
    return ModelRequest(messages=[ChatMessage("user", "hello")], purpose=purpose)


class Reply(msgspec.Struct):
    text: str


async def test_scripted_model_replays_per_purpose_and_records_history():
    model = ScriptedModel().enqueue("select", "a", {"x": 1}).enqueue("actor", Reply("hi"))
    assert (await model.complete(request("select"))).text == "a"
    assert (await model.complete(request("actor"))).text == '{"text":"hi"}'
    assert (await model.complete(request("select"))).text == '{"x":1}'
    assert [r.purpose for r in model.history] == ["select", "actor", "select"]


async def test_scripted_model_falls_back_to_the_stage_queue():
    model = ScriptedModel().enqueue("story", "plan")
    assert (await model.complete(request("story.plan_cycle"))).text == "plan"


async def test_scripted_model_raises_queued_exceptions():
    model = ScriptedModel().enqueue("quality", ModelRefused("no"))
    with pytest.raises(ModelRefused):
        await model.complete(request("quality"))


async def test_scripted_model_with_nothing_queued_says_so():
    model = ScriptedModel().enqueue("actor", "x")
    with pytest.raises(NothingQueued, match="'emotion'"):
        await model.complete(request("emotion"))


async def test_results_carry_estimated_usage():
    result = await ScriptedModel().enqueue("actor", "你好").complete(request("actor"))
    assert result.usage == Usage(input_tokens=2, output_tokens=2, estimated=True)


async def test_function_model_accepts_sync_and_async_functions():
    async def answer(req):
        return ModelResult(text="r", usage=Usage(1, 1), model="m")

    assert (await FunctionModel(lambda req: req.purpose).complete(request("intent"))).text == "intent"
    assert (await FunctionModel(answer).complete(request("intent"))).usage == Usage(1, 1)


async def test_network_guard_blocks_a_real_endpoint_before_any_socket():
    client = openai.AsyncOpenAI(base_url="https://api.openai.com/v1", api_key="sk-test", max_retries=0)
    with block_network_models(), pytest.raises(NetworkModelCallBlocked, match="api.openai.com"):
        await client.chat.completions.create(model="gpt", messages=[{"role": "user", "content": "hi"}])


def test_network_guard_blocks_the_sync_client_too():
    client = openai.OpenAI(base_url="http://example.com/v1", api_key="sk-test", max_retries=0)
    with block_network_models(), pytest.raises(NetworkModelCallBlocked):
        client.models.list()


async def test_network_guard_lets_loopback_through():
    # Nothing listens on port 9; the call gets past the guard and fails to connect instead.
    client = openai.AsyncOpenAI(base_url="http://127.0.0.1:9/v1", api_key="x", max_retries=0, timeout=2)
    with block_network_models(), pytest.raises(openai.APIConnectionError):
        await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])


def test_network_guard_restores_the_client_afterwards():
    from openai import _base_client as base

    before = base.AsyncAPIClient.request
    with block_network_models():
        with block_network_models():
            assert base.AsyncAPIClient.request is not before
    # The autouse guard of this folder is still active, so compare against the entry state.
    assert base.AsyncAPIClient.request is before
