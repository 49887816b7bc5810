"""OpenTelemetry export end to end: ``troupe run`` with telemetry on sends its
spans and metrics over OTLP/HTTP to a receiver in the test, which decodes them
with the protocol's own protobuf definitions. A session with a subagent gives
one trace: the session, its input, each model call and tool call, and the
subagent's session as a child of the parent's input."""

from __future__ import annotations

import json
import socket
from collections import Counter
from pathlib import Path
from typing import Any

from opentelemetry.proto.trace.v1.trace_pb2 import Span

from tests.cli.conftest import Home, home, mock_llm
from tests.telemetry.receiver import attributes, otlp_receiver

__all__ = ["home"]  # the fixture, imported for pytest

TASK = "Review hello.py"
CHILD_TASK = "Write tests for hello.py"
SCRIPT = {
    "conversations": [
        {
            "match": CHILD_TASK,
            "turns": [
                {"tool_calls": [{"name": "shell", "arguments": {"command": "echo child-work"}}],
                 "usage": {"input": 30, "output": 7}},
                {"text": "child done", "usage": {"input": 40, "output": 3}},
            ],
        },
        {
            "match": TASK,
            "turns": [
                {"tool_calls": [{"name": "spawn_agent", "arguments": {"task": CHILD_TASK}}],
                 "usage": {"input": 100, "output": 20}},
                {"tool_calls": [{"name": "wait", "arguments": {"agent_ids": ["a-1"]}}],
                 "usage": {"input": 120, "output": 5}},
                {"text": "Reviewed; tests written.", "usage": {"input": 150, "output": 9}},
            ],
        },
    ],
    "turns": [{"text": "unexpected request"}],
}  # fmt: skip


def _hex(raw: bytes) -> str:
    return raw.hex()


def _by_name(spans: list[Span], name: str) -> list[Span]:
    return [span for span in spans if span.name == name]


def _one(spans: list[Span], name: str, **wanted: Any) -> Span:
    found = [
        span
        for span in _by_name(spans, name)
        if all(attributes(span.attributes).get(k) == v for k, v in wanted.items())
    ]
    assert len(found) == 1, f"{name} {wanted}: {[s.name for s in spans]}"
    return found[0]


def _children(spans: list[Span], parent: Span) -> list[Span]:
    return [span for span in spans if span.parent_span_id == parent.span_id]


def _kinds(spans: list[Span]) -> Counter[str]:
    """Span names with the model left out (``chat MODEL`` is ``chat``): a subagent
    runs its profile's model, not the parent's ``--model``."""
    return Counter("chat" if span.name.startswith("chat ") else span.name for span in spans)


async def _run(home: Home, url: str, base_url: str) -> dict[str, Any]:
    (home.work / "hello.py").write_text("print('hi')\n")
    result = await home.troupe(
        "run", "--base-url", base_url, "-m", "test-model", "--output-format", "json", "-p", TASK,
        TROUPE_TELEMETRY="1", OTEL_EXPORTER_OTLP_ENDPOINT=url,
        OTEL_METRIC_EXPORT_INTERVAL="600000", OTEL_BSP_SCHEDULE_DELAY="100",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr.decode()
    return json.loads(result.stdout)


async def test_a_session_with_a_subagent_exports_its_span_tree_and_metrics(home: Home) -> None:
    with otlp_receiver() as received:
        async with mock_llm(SCRIPT) as mock:
            outcome = await _run(home, received.url, mock.base_url)
    assert outcome["status"] == "done"
    assert {path for path, _, _ in received.posts} == {"/v1/traces", "/v1/metrics"}
    assert all(kind == "application/x-protobuf" for _, kind, _ in received.posts)
    spans = received.spans()
    assert len({span.trace_id for span in spans}) == 1, "the subagent is in its parent's trace"
    session = _one(spans, "troupe.session")
    assert session.parent_span_id == b""
    session_id = attributes(session.attributes)["session.id"]
    assert outcome["session_id"] == session_id
    (parent_input,) = _children(spans, session)
    assert parent_input.name == "troupe.input"

    subagent = _one(spans, "troupe.subagent")
    assert subagent.parent_span_id == parent_input.span_id
    sub_attributes = attributes(subagent.attributes)
    assert sub_attributes["session.id"] == f"{session_id}.a-1"
    assert sub_attributes["troupe.parent.session.id"] == session_id
    (child_input,) = _children(spans, subagent)
    assert child_input.name == "troupe.input"

    parent_kids = _kinds(_children(spans, parent_input))
    assert parent_kids == {
        "chat": 3,
        "execute_tool spawn_agent": 1,
        "execute_tool wait": 1,
        "troupe.subagent": 1,
    }
    assert _kinds(_children(spans, child_input)) == {"chat": 2, "execute_tool shell": 1}
    shell = _one(spans, "execute_tool shell")
    shell_attributes = attributes(shell.attributes)
    assert shell_attributes["troupe.tool.kind"] == "command"
    assert shell_attributes["troupe.policy.action"] == "allow"
    assert "troupe.command" not in shell_attributes  # text stays home by default

    calls = [span for span in spans if span.name.startswith("chat ")]
    assert {attributes(c.attributes)["gen_ai.operation.name"] for c in calls} == {"chat"}
    assert attributes(_by_name(calls, "chat test-model")[0].attributes)["gen_ai.request.model"] == (
        "test-model"
    )
    tokens = sorted(
        (attributes(c.attributes)["gen_ai.usage.input_tokens"],
         attributes(c.attributes)["gen_ai.usage.output_tokens"]) for c in calls
    )  # fmt: skip
    assert tokens == [(30, 7), (40, 3), (100, 20), (120, 5), (150, 9)]
    for span in spans:  # every span ended, within its parent's time
        assert span.end_time_unix_nano >= span.start_time_unix_nano > 0
    every_value = json.dumps([attributes(s.attributes) for s in spans], default=str)
    assert TASK not in every_value and "child-work" not in every_value
    assert all(r["service.name"] == "troupe" for r in received.resource_attributes())

    points = received.metric_points()
    assert sum(v for _, v in points["troupe.session.count"]) == 2
    subagents = [v for a, v in points["troupe.session.count"] if a["troupe.subagent"]]
    assert subagents == [1]
    by_kind: Counter[str] = Counter()
    for point_attributes, count in points["troupe.token.usage"]:
        by_kind[point_attributes["type"]] += int(count)
    assert {a["gen_ai.request.model"] for a, _ in points["troupe.token.usage"]} >= {"test-model"}
    assert by_kind["input"] == 30 + 40 + 100 + 120 + 150
    assert by_kind["output"] == 7 + 3 + 20 + 5 + 9
    tools = {a["gen_ai.tool.name"]: v for a, v in points["troupe.tool_call.count"]}
    assert tools == {"spawn_agent": 1, "wait": 1, "shell": 1}
    assert sum(v for _, v in points["troupe.model_call.duration"]) == 5


async def test_the_config_file_turns_it_on_with_prompt_and_output_text(home: Home) -> None:
    """The user's ``[telemetry]`` table alone: on, its endpoint (``/v1/traces`` and
    ``/v1/metrics`` added), and text, which only this opt-in sends."""
    with otlp_receiver() as received:
        home.config.write_text(
            f'[telemetry]\nenabled = true\nendpoint = "{received.url}"\ncapture_content = true\n'
        )
        async with mock_llm(SCRIPT) as mock:
            (home.work / "hello.py").write_text("print('hi')\n")
            result = await home.troupe(
                "run", "--base-url", mock.base_url, "--output-format", "json", "-p", TASK,
                OTEL_METRIC_EXPORT_INTERVAL="600000",
            )  # fmt: skip
    assert result.returncode == 0, result.stderr.decode()
    assert {path for path, _, _ in received.posts} == {"/v1/traces", "/v1/metrics"}
    spans = received.spans()
    inputs = [str(attributes(s.attributes).get("troupe.input.text")) for s in spans
              if s.name == "troupe.input"]  # fmt: skip
    assert sorted(inputs) == sorted([TASK, CHILD_TASK])
    shell = attributes(_one(spans, "execute_tool shell").attributes)
    assert shell["troupe.command"] == "echo child-work"
    assert "child-work" in shell["troupe.tool.output"]


async def test_telemetry_off_sends_nothing(home: Home) -> None:
    with otlp_receiver() as received:
        async with mock_llm(SCRIPT) as mock:
            (home.work / "hello.py").write_text("print('hi')\n")
            result = await home.troupe(
                "run", "--base-url", mock.base_url, "--output-format", "json", "-p", TASK,
                OTEL_EXPORTER_OTLP_ENDPOINT=received.url,
            )  # fmt: skip
    assert result.returncode == 0, result.stderr.decode()
    assert received.posts == []


async def test_an_exporter_troupe_does_not_ship_is_one_line(home: Home) -> None:
    result = await home.troupe(
        "run", "--base-url", "http://127.0.0.1:9/v1", "-p", TASK,
        TROUPE_TELEMETRY="1", OTEL_EXPORTER_OTLP_PROTOCOL="grpc",
    )  # fmt: skip
    assert result.returncode == 2
    assert (
        result.stderr.decode()
        .strip()
        .endswith("$OTEL_EXPORTER_OTLP_PROTOCOL='grpc': Troupe's exporter speaks http/protobuf")
    ), result.stderr.decode()


def test_the_config_file_turns_it_on(tmp_path: Path) -> None:
    from actors.config import load_config
    from actors.telemetry import telemetry_settings

    path = tmp_path / "config.toml"
    path.write_text('[telemetry]\nenabled = true\nendpoint = "http://collector:4318"\n')
    section = load_config(path).telemetry
    assert telemetry_settings(section, {}).enabled
    assert telemetry_settings(section, {}).endpoint == "http://collector:4318"
    assert not telemetry_settings(section, {"TROUPE_TELEMETRY": "0"}).enabled
    assert not telemetry_settings(section, {"OTEL_SDK_DISABLED": "true"}).enabled
    assert not telemetry_settings(None, {}).enabled
    content = {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true"}
    assert telemetry_settings(section, content).capture_content
    assert not telemetry_settings(section, {"OTEL_TRACES_EXPORTER": "none"}).traces
    assert telemetry_settings(section, {"OTEL_TRACES_EXPORTER": "none"}).metrics


async def test_config_says_where_telemetry_goes_and_an_untrusted_project_cannot_turn_it_on(
    home: Home,
) -> None:
    shown = await home.troupe(
        "config", TROUPE_TELEMETRY="1", OTEL_EXPORTER_OTLP_ENDPOINT="http://collector:4318"
    )
    assert shown.returncode == 0, shown.stderr.decode()
    assert (
        "telemetry         on -> http://collector:4318: traces and metrics, "
        "without prompt and output text"
    ) in shown.stdout.decode()
    project = home.work / ".troupe"
    project.mkdir()
    (project / "config.toml").write_text(
        '[telemetry]\nenabled = true\nendpoint = "http://theirs:4318"\ncapture_content = true\n'
    )
    untrusted = await home.troupe("config")
    assert untrusted.returncode == 0, untrusted.stderr.decode()
    assert "telemetry         off" in untrusted.stdout.decode()
    assert "telemetry" in untrusted.stderr.decode()  # the one line saying what was ignored


async def test_a_collector_that_is_down_costs_one_line_not_the_run(home: Home) -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{probe.getsockname()[1]}"
    async with mock_llm(SCRIPT) as mock:
        (home.work / "hello.py").write_text("print('hi')\n")
        result = await home.troupe(
            "run", "--base-url", mock.base_url, "--output-format", "json", "-p", TASK,
            TROUPE_TELEMETRY="1", OTEL_EXPORTER_OTLP_ENDPOINT=closed,
        )  # fmt: skip
    assert result.returncode == 0, result.stderr.decode()
    assert json.loads(result.stdout)["status"] == "done"
    assert result.stderr.decode().splitlines() == [
        "troupe: telemetry was not delivered to the collector: Connection refused"
    ]
