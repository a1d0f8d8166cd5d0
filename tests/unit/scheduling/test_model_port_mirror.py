import msgspec
import pytest

from scheduling import ports


@pytest.mark.parametrize("name", ["ChatMessage", "ResponseSchema", "ModelRequest", "Usage", "ModelResult"])
def test_port_structs_mirror_the_app_port_field_by_field(name):
    app_port = pytest.importorskip("app.llm.port")
    ours = [(f.name, f.default) for f in msgspec.structs.fields(getattr(ports, name))]
    theirs = [(f.name, f.default) for f in msgspec.structs.fields(getattr(app_port, name))]
    assert ours == theirs


def test_a_scheduling_request_converts_to_the_app_request():
    app_port = pytest.importorskip("app.llm.port")
    ours = ports.ModelRequest(messages=[ports.ChatMessage("user", "hi")], purpose="emotion",
                              response_schema=ports.ResponseSchema("x", {"type": "object"}))
    theirs = msgspec.convert(msgspec.to_builtins(ours), app_port.ModelRequest)
    assert theirs.purpose == "emotion" and theirs.messages[0].content == "hi"
