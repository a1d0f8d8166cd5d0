"""``stream(request, on_delta)`` on the fakes and wrappers, and ``stream_or_complete``: what a
pipeline unit test streams from."""

import asyncio

import pytest

from app.errors import ModelTimeout
from app.llm.fakes import FunctionModel, ScriptedModel, Streamed
from app.llm.port import ChatMessage, ModelRequest, ModelResult, Usage, stream_or_complete
from app.llm.streaming import split_pieces
from app.llm.structured import structured


def ask(purpose: str = "actor") -> ModelRequest:
    return ModelRequest(messages=[ChatMessage("user", "hello")], purpose=purpose)


class Deltas(list):
    async def __call__(self, piece: str) -> None:
        self.append(piece)


@pytest.mark.parametrize("text", ["", "a", "hello there, friend", "今天有点累，你们在吗？", "x" * 1000])
def test_pieces_are_few_non_empty_and_join_back_into_the_text(text):
    pieces = split_pieces(text)
    assert "".join(pieces) == text and all(pieces) and len(pieces) <= 4


async def test_the_scripted_model_streams_its_answer_in_a_few_pieces():
    model = ScriptedModel().enqueue("actor", "Hello there, how are you today?")
    deltas = Deltas()
    result = await model.stream(ask(), deltas)
    assert len(deltas) > 1 and "".join(deltas) == result.text == "Hello there, how are you today?"
    assert result.first_token_ms is not None and result.usage.estimated
    assert model.history == [ask()]


async def test_stream_returns_what_complete_would():
    model = ScriptedModel().enqueue("actor", "same words", "same words")
    streamed, plain = await model.stream(ask(), Deltas()), await model.complete(ask())
    assert (streamed.text, streamed.usage, streamed.model, streamed.finish_reason) == (
        plain.text, plain.usage, plain.model, plain.finish_reason)
    assert plain.first_token_ms is None


async def test_streamed_scripts_exact_pieces_their_pace_and_a_failure_mid_stream():
    model = ScriptedModel().enqueue("actor", Streamed("Hel", "lo", delay_s=0.01),
                                    Streamed("Half a ", error=ModelTimeout("too slow")))
    deltas = Deltas()
    result = await model.stream(ask(), deltas)
    assert deltas == ["Hel", "lo"] and result.text == "Hello" and result.first_token_ms >= 9
    deltas.clear()
    with pytest.raises(ModelTimeout):
        await model.stream(ask(), deltas)
    assert deltas == ["Half a "]


async def test_complete_sees_a_streamed_script_as_its_joined_text_or_its_error():
    model = ScriptedModel().enqueue("actor", Streamed("a", "b", finish_reason="length"), Streamed("a", error=ModelTimeout("x")))
    result = await model.complete(ask())
    assert (result.text, result.finish_reason) == ("ab", "length")
    with pytest.raises(ModelTimeout):
        await model.complete(ask())


async def test_a_scripted_error_is_raised_before_any_delta():
    model = ScriptedModel().enqueue("actor", ModelTimeout("down"))
    deltas = Deltas()
    with pytest.raises(ModelTimeout):
        await model.stream(ask(), deltas)
    assert deltas == []


async def test_the_function_model_streams_what_its_function_answers():
    async def answer(request):
        return Streamed("one ", "two") if request.purpose == "actor" else "plain answer"

    model = FunctionModel(answer)
    deltas = Deltas()
    assert (await model.stream(ask(), deltas)).text == "one two" and deltas == ["one ", "two"]
    deltas.clear()
    assert (await model.stream(ask("cross_reply"), deltas)).text == "plain answer" and "".join(deltas) == "plain answer"


class CompleteOnly:
    """A model with ``complete`` only, as a library's own port fake might be."""

    async def complete(self, request):
        return ModelResult(text="whole reply", usage=Usage(), model="m")


async def test_stream_or_complete_falls_back_to_one_delta_for_a_model_without_stream():
    deltas = Deltas()
    result = await stream_or_complete(CompleteOnly(), ask(), deltas)
    assert deltas == ["whole reply"] and result.text == "whole reply" and result.first_token_ms is None


async def test_stream_or_complete_uses_stream_when_the_model_has_it():
    deltas = Deltas()
    result = await stream_or_complete(ScriptedModel().enqueue("actor", "several small pieces here"), ask(), deltas)
    assert len(deltas) > 1 and "".join(deltas) == result.text


async def test_the_structured_wrapper_streams_a_complete_only_model_in_pieces():
    deltas = Deltas()
    result = await structured(CompleteOnly()).stream(ask(), deltas)
    assert len(deltas) > 1 and "".join(deltas) == "whole reply" == result.text


async def test_the_structured_wrapper_uses_the_wrapped_models_own_stream():
    class Streaming(CompleteOnly):
        async def stream(self, request, on_delta):
            await on_delta("own")
            return ModelResult(text="own", usage=Usage(), model="m", first_token_ms=1.0)

    deltas = Deltas()
    result = await structured(Streaming()).stream(ask(), deltas)
    assert deltas == ["own"] and result.first_token_ms == 1.0


async def test_an_empty_answer_sends_no_delta():
    deltas = Deltas()
    result = await ScriptedModel().enqueue("actor", "").stream(ask(), deltas)
    assert result.text == "" and deltas == []


async def test_a_cancelled_stream_stops_sending():
    model = ScriptedModel().enqueue("actor", Streamed(*"abcdefghij", delay_s=0.02))
    deltas = Deltas()
    task = asyncio.create_task(model.stream(ask(), deltas))
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    seen = len(deltas)
    await asyncio.sleep(0.05)
    assert 0 < seen == len(deltas) < 10
