"""AWS Bedrock Converse over loopback HTTP: the adapter against the mock's Converse
wire (SigV4 or a Bedrock API key, AWS event-stream framing), botocore itself reading
what the mock sends, the typed errors, and how the endpoint is chosen."""

from __future__ import annotations

import json
import re
from urllib.parse import unquote

import pytest

from actors.kernel import Runtime
from actors.mockllm import (
    Fault,
    MockLLMServer,
    Script,
    ToolCallSpec,
    Turn,
    UsageSpec,
    serve_mock_llm,
)
from actors.mockllm.answer import make_answer
from actors.mockllm.wire_bedrock import error_event
from actors.mockllm.wire_converse import complete as mock_complete
from actors.mockllm.wire_converse import stream as mock_stream
from actors.models.config import Endpoint, endpoint, endpoint_from_env
from actors.models.endpoints import bedrock_endpoint, platform_adapter, platform_endpoints_from_env
from actors.models.errors import (
    ConfigurationError,
    InvalidRequestError,
    ModelError,
    RateLimitError,
)
from protocol.llm import (
    Finish,
    Message,
    ReasoningDelta,
    Request,
    StreamFailed,
    ToolCallEnd,
    ToolDefinition,
)
from tests.models.converse_shapes import (
    request_problems,
    response_problems,
    service_model,
    stream_event_problems,
)
from tests.models.endpoints.helpers import collect, session_on
from tests.models.endpoints.test_bedrock import sigv4_signature

NOVA = "us.amazon.nova-micro-v1:0"
TOOL = ToolDefinition("lookup", "Looks a word up.", {"type": "object", "properties": {}})


def converse(server: MockLLMServer, **keys: str) -> Endpoint:
    creds = keys or {"access_key_id": "AKIDEXAMPLE", "secret_access_key": "s3cr3t"}
    return bedrock_endpoint("us-east-1", base_url=server.base_url, wire="bedrock_converse", **creds)


def sent_model(path: str) -> str:
    return unquote(path.split("/model/")[1].rsplit("/", 1)[0])


async def test_a_streamed_tool_round_signed_with_sigv4(runtime: Runtime) -> None:
    script = Script(
        turns=[
            Turn(
                reasoning="The user wants a word.",
                text="Let me look.",
                tool_calls=[ToolCallSpec("lookup", {"word": "troupe"}, id="tooluse_A1")],
                usage=UsageSpec(input=40, output=12, cache_read=30, cache_write=5),
            ),
            Turn(text="A company of actors."),
        ]
    )
    async with serve_mock_llm(script) as server, session_on(runtime, converse(server)) as session:
        request = Request(NOVA, [Message.system("Be brief."), Message.user("troupe?")], [TOOL])
        first = await collect(session, request)
        answer = first[-1].response
        assert "".join(e.delta for e in first if type(e) is ReasoningDelta) == answer.reasoning
        assert answer.reasoning == "The user wants a word."
        assert answer.text == "Let me look."
        assert [e.call.arguments for e in first if type(e) is ToolCallEnd] == [{"word": "troupe"}]
        assert answer.finish_reason.reason == "tool_calls"
        assert answer.finish_reason.raw == "tool_use"
        usage = answer.usage
        assert (usage.input_tokens, usage.output_tokens, usage.total_tokens) == (40, 12, 52)
        assert (usage.cache_read_tokens, usage.cache_write_tokens) == (30, 5)
        follow = Request(
            NOVA,
            [*request.messages, answer.message, Message.tool_result("tooluse_A1", "a company")],
            [TOOL],
        )
        second = await collect(session, follow)
        assert type(second[-1]) is Finish
        assert second[-1].response.text == "A company of actors."
        assert second[-1].response.finish_reason.reason == "stop"
    for sent in server.requests:
        assert sent.path == "/model/us.amazon.nova-micro-v1%3A0/converse-stream"
        assert sent.headers["accept"] == "application/vnd.amazon.eventstream"
        assert request_problems(sent.json(), sent_model(sent.path), "ConverseStream") == []
        _, signature = sigv4_signature(sent.method, sent.path, sent.headers, sent.body, "s3cr3t")
        assert sent.headers["authorization"].endswith(f"Signature={signature}")
        assert re.search(
            r"Credential=AKIDEXAMPLE/\d{8}/us-east-1/bedrock/aws4_request",
            sent.headers["authorization"],
        )
    carried = server.requests[1].json()["messages"]
    assert carried[1]["content"][0]["reasoningContent"]["reasoningText"]["text"] == (
        "The user wants a word."
    )
    assert carried[2]["content"][0]["toolResult"]["toolUseId"] == "tooluse_A1"


async def test_complete_with_a_bedrock_api_key_on_a_direct_endpoint(runtime: Runtime) -> None:
    async with serve_mock_llm(Script(turns=[Turn(text="whole answer")])) as server:
        ep = endpoint("bedrock_converse", server.base_url, "bedrock-api-key")
        assert ep.base_url == server.base_url  # no version path appended
        async with session_on(runtime, ep) as session:
            response = await session.complete(Request(NOVA, [Message.user("hi")]))
    assert response.text == "whole answer" and response.finish_reason.reason == "stop"
    sent = server.requests[0]
    assert sent.path == "/model/us.amazon.nova-micro-v1%3A0/converse"
    assert sent.headers["authorization"] == "Bearer bedrock-api-key"


async def test_a_keyless_direct_endpoint_outside_aws_goes_unsigned(runtime: Runtime) -> None:
    async with serve_mock_llm(Script(turns=[Turn(text="local")])) as server:
        ep = endpoint("bedrock_converse", server.base_url)
        async with session_on(runtime, ep) as session:
            assert (await session.complete(Request(NOVA, [Message.user("hi")]))).text == "local"
    assert "authorization" not in server.requests[0].headers


async def test_errors_are_typed(runtime: Runtime) -> None:
    script = Script(
        turns=[
            Turn(fault=Fault(status=429, message="Too many requests, please wait.")),
            Turn(fault=Fault(status=400, message="The provided model identifier is invalid.")),
            Turn(text="a long enough answer to break", fault=Fault(error_after=3)),
        ],
        delta_size=4,
    )
    async with serve_mock_llm(script) as server, session_on(runtime, converse(server)) as session:
        request = Request(NOVA, [Message.user("hi")])
        with pytest.raises(RateLimitError) as limited:
            await session.complete(request)
        assert limited.value.message == "Too many requests, please wait."
        assert limited.value.error_code == "ThrottlingException"  # the mock's header
        with pytest.raises(InvalidRequestError) as invalid:
            await session.complete(request)
        assert invalid.value.status_code == 400
        assert invalid.value.error_code == "ValidationException"
        seen = await collect(session, request)
    assert type(seen[-1]) is StreamFailed
    assert seen[-1].error.kind == "server"
    assert "internalServerException" in seen[-1].error.message


TURNS = [
    Turn(text="plain"),
    Turn(reasoning="hmm", text="with thought", usage=UsageSpec(cache_read=3, cache_write=0)),
    Turn(tool_calls=[ToolCallSpec("a", {"x": 1}), ToolCallSpec("b", {})]),
    Turn(text="cut", finish="length"),
]


@pytest.mark.parametrize("turn", TURNS, ids=["text", "reasoning", "tools", "length"])
def test_botocore_reads_the_mock_and_every_shape_is_aws(turn: Turn) -> None:
    """The mock's Converse answers as botocore parses them (its own event-stream reader
    and JSON parser), and every key and enum value checked against the service model."""
    import botocore.eventstream
    import botocore.exceptions
    import botocore.parsers

    answer = make_answer(turn, 1, "m", 3)
    model = service_model()
    body = json.loads(mock_complete(answer))
    assert response_problems(body) == []
    parsed = botocore.parsers.RestJSONParser().parse(
        {"body": mock_complete(answer), "headers": {}, "status_code": 200},
        model.operation_model("Converse").output_shape,
    )
    assert parsed["stopReason"] == body["stopReason"]
    frames = [*mock_stream(answer), error_event("boom")]

    class Body:
        def stream(self) -> object:
            yield from frames

    shape = model.operation_model("ConverseStream").output_shape.members["stream"]
    events = botocore.eventstream.EventStream(
        Body(), shape, botocore.parsers.EventStreamJSONParser(), "ConverseStream"
    )
    names = []
    with pytest.raises(botocore.exceptions.EventStreamError, match="internalServerException"):
        for event in events:
            ((name, payload),) = event.items()
            names.append(name)
            assert stream_event_problems(name, payload) == []
    assert names[0] == "messageStart" and names[-2:] == ["messageStop", "metadata"]
    buffer = botocore.eventstream.EventStreamBuffer()
    buffer.add_data(b"".join(mock_stream(answer)))
    for message in buffer:  # the padding is on the wire, as Bedrock sends it
        assert "p" in json.loads(message.payload)


def test_the_endpoint_is_chosen_like_the_other_bedrock_one() -> None:
    env = {
        "TROUPE_USE_BEDROCK": "1",
        "AWS_REGION": "eu-central-1",
        "AWS_BEARER_TOKEN_BEDROCK": "br",
    }
    found = platform_endpoints_from_env(env)
    assert sorted(found) == ["bedrock-converse"]
    ep = found["bedrock-converse"]
    assert (ep.wire, ep.platform) == ("bedrock_converse", "bedrock")
    assert ep.base_url == "https://bedrock-runtime.eu-central-1.amazonaws.com"
    assert ep.platform_options == {"region": "eu-central-1", "bearer_token": "br"}
    both = platform_endpoints_from_env({**env, "CLAUDE_CODE_USE_BEDROCK": "1"})
    assert (both["bedrock"].wire, both["bedrock-converse"].wire) == (
        "anthropic",
        "bedrock_converse",
    )
    local = platform_endpoints_from_env(
        {**env, "AWS_ENDPOINT_URL_BEDROCK_RUNTIME": "http://localhost:4566/"}
    )
    assert local["bedrock-converse"].base_url == "http://localhost:4566"
    direct = endpoint_from_env("bedrock_converse", {"AWS_BEARER_TOKEN_BEDROCK": "k"})
    assert direct.base_url == "https://bedrock-runtime.us-east-1.amazonaws.com"
    assert direct.api_key == "k"


def test_a_signed_endpoint_needs_a_region() -> None:
    ep = Endpoint("bedrock_converse", "http://127.0.0.1:1", platform="bedrock")
    with pytest.raises(ConfigurationError, match="region"):
        platform_adapter(ep)


async def test_rounds_mode_counts_converse_tool_results(runtime: Runtime) -> None:
    script = Script(rounds=2, rounds_tool="step")
    async with serve_mock_llm(script) as server, session_on(runtime, converse(server)) as session:
        history = [Message.user("go")]
        texts = []
        for _ in range(5):
            response = await session.complete(Request(NOVA, history, [TOOL]))
            texts.append(response.text)
            if not response.tool_calls:
                break
            (call,) = response.tool_calls
            history += [response.message, Message.tool_result(call.id, "ok")]
    assert texts[-1] == "done"
    assert len(server.requests) == 3


def test_the_command_line_mock_speaks_converse() -> None:
    """``troupe mock-llm`` as users start it: Converse and ConverseStream at Bedrock's
    paths, the stream read by botocore's own event-stream decoder."""
    import subprocess

    import botocore.eventstream
    import httpx

    from tests.models.test_mockllm import _troupe

    child = subprocess.Popen(
        [*_troupe(), "mock-llm", "--port", "0"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None
        url = child.stdout.readline().strip()
        body = {"messages": [{"role": "user", "content": [{"text": "hi"}]}]}
        with httpx.Client(timeout=10) as client:
            whole = client.post(url + "/model/amazon.nova-lite-v1%3A0/converse", json=body)
            streamed = client.post(
                url + "/model/amazon.nova-lite-v1%3A0/converse-stream", json=body
            )
    finally:
        child.terminate()
        child.wait(timeout=10)
    assert whole.json()["output"]["message"]["content"] == [{"text": "ok"}]
    assert response_problems(whole.json()) == []
    assert streamed.headers["content-type"] == "application/vnd.amazon.eventstream"
    buffer = botocore.eventstream.EventStreamBuffer()
    buffer.add_data(streamed.content)
    names = [message.headers[":event-type"] for message in buffer]
    assert names == [
        "messageStart",
        "contentBlockDelta",
        "contentBlockStop",
        "messageStop",
        "metadata",
    ]


ERROR_TYPES = [
    (400, "ValidationException", "Input is too long for requested model.", "context_length"),
    (400, "ServiceQuotaExceededException", "Your account has reached its quota.", "quota"),
    (403, "AccessDeniedException", "You don't have access to the model.", "access_denied"),
    (408, "ModelTimeoutException", "The model took too long.", "timeout"),
    (424, "ModelErrorException", "The model failed to process the request.", "server"),
    (429, "ModelNotReadyException", "The model is not ready.", "rate_limit"),
]


@pytest.mark.parametrize(("status", "name", "message", "kind"), ERROR_TYPES)
async def test_aws_error_types_in_the_header_pick_the_typed_error(
    runtime: Runtime, status: int, name: str, message: str, kind: str
) -> None:
    """Bedrock names its error in ``x-amzn-ErrorType`` (the body has only a message)."""
    header = {"x-amzn-errortype": f"{name}:http://internal.amazon.com/coral/com.amazon.bedrock/"}
    fault = Fault(status=status, message=message, headers=header)
    async with (
        serve_mock_llm(Script(turns=[Turn(fault=fault)])) as server,
        session_on(runtime, converse(server)) as session,
    ):
        with pytest.raises(ModelError) as caught:
            await session.complete(Request(NOVA, [Message.user("hi")]))
    error = caught.value
    assert (error.kind, error.status_code, error.message) == (kind, status, message)
    assert error.error_code == name
