"""The mock speaks each wire as the real APIs do: every event type and every key it
sends, compared with the recorded real streams in ../shared/conformance/providers.

For each JSON path (event type, then nested members, list items by their ``type``)
the mock's keys must be keys the real API sent there, and the keys the real API sent
in at least 80% of its answers must be in the mock's too. Paths the recordings never
show (error bodies, the ``length`` finish) are listed below with the reason. For
OpenAI Responses, the order of events around each output item must be the recorded
one (``content_part.added`` before text deltas, summary parts around reasoning).
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from typing import Any

import pytest

from actors.mockllm.answer import make_answer
from actors.mockllm.script import ToolCallSpec, Turn, UsageSpec
from actors.mockllm.wires import WIRES
from tests.models.conftest import SHARED
from tests.models.oracle import sse_payloads
from tests.models.test_conformance import _files, plan

FREE_FORM = {"parameters", "input", "args", "metadata", "properties", "schema", "input_schema"}
"""Members whose keys are the user's data (tool arguments, schemas), not the wire's."""

REQUIRED_SHARE = 0.8

NOT_RECORDED = {
    # path prefix -> why the recordings cannot show it (the shape is the documented one)
    "errbody": "HTTP error bodies: the recordings hold one; the shapes are the documented ones",
    "error.error": "the recorded in-stream error has another error type",
    "response.incomplete": "no recorded answer ran out of output tokens",
    "body.incomplete_details": "no recorded answer ran out of output tokens",
    "chunk.error": "in-stream errors of Chat and Gemini: the documented shapes",
    "error.": "Anthropic's in-stream error: the documented shape",
    "error": "Anthropic's in-stream error: the documented shape",
    "body.choices[].message.tool_calls": "no recorded complete Chat answer calls a tool",
}

EXTRA_KEYS = {
    # (wire, path) -> keys the mock sends that the recordings do not show, and why
    ("openai_chat", "body.choices[].message"): {"reasoning_content", "tool_calls"},
    ("gemini", "chunk"): {"error"},  # the in-stream error chunk
    ("gemini", "chunk.usageMetadata"): {"cachedContentTokenCount"},  # documented field
    ("gemini", "body.usageMetadata"): {"cachedContentTokenCount"},
    ("gemini", "body.candidates[].content.parts[]"): {"thought"},  # includeThoughts
}

EXCUSED_MISSING = {
    ("openai_chat", "chunk"): {"choices", "created", "id", "model", "object", "system_fingerprint"},
    ("openai_chat", "body"): {"error"},  # most recorded bodies are errors
    ("gemini", "chunk"): {"candidates", "modelVersion", "responseId", "usageMetadata"},
    ("gemini", "chunk.candidates[].content.parts[].functionCall"): {"willContinue"},  # Vertex
    ("gemini", "body.usageMetadata"): {"thoughtsTokenCount"},  # only when it thought
    ("gemini", "body.candidates[].content.parts[]"): {"thoughtSignature"},  # only with one
}

TURNS = [
    Turn(text="Hello there, this is some text."),
    Turn(reasoning="Thinking it over.", text="An answer."),
    Turn(tool_calls=[ToolCallSpec("f", {"a": 1}), ToolCallSpec("g", {})]),
    Turn(
        reasoning="Which tool?",
        tool_calls=[ToolCallSpec("f", {"a": 1})],
        usage=UsageSpec(reasoning=3, cache_read=2),
    ),
    Turn(text="cut short", finish="length"),
]
REQUEST = {
    "model": "m",
    "input": "hi",
    "stream": True,
    "stream_options": {"include_usage": True},
    "tools": [{"type": "function", "name": "f", "parameters": {"type": "object"}}],
}


def walk(path: str, value: Any, out: dict[str, list[set[str]]]) -> None:
    if isinstance(value, dict):
        out[path].append(set(value))
        for key, member in value.items():
            if key in FREE_FORM or (key == "response" and "." not in path):
                if key == "response":
                    walk(f"{path}.response", member, out)
                continue
            sub = f"{path}.{key}"
            if isinstance(member, dict) and isinstance(member.get("type"), str):
                sub += f"[{member['type']}]"
            walk(sub, member, out)
    elif isinstance(value, list):
        for member in value:
            if isinstance(member, dict):
                kind = member.get("type") if isinstance(member.get("type"), str) else ""
                walk(f"{path}[{kind}]", member, out)


def root(wire: str, payload: Any) -> str:
    if wire in ("openai_responses", "anthropic") and isinstance(payload, dict):
        return str(payload.get("type", "chunk"))
    return "chunk"


def stream_payloads(body: bytes) -> list[Any]:
    out = []
    for _, data in sse_payloads(body):
        if data == "[DONE]":
            continue
        try:
            out.append(json.loads(data))
        except ValueError:
            continue  # recordings with broken lines, kept broken on purpose
    return out


def recorded() -> dict[tuple[str, str], dict[str, list[set[str]]]]:
    shapes: dict[tuple[str, str], dict[str, list[set[str]]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for relative in _files():
        steps, _ = plan(relative)
        for wire, reply in steps:
            if reply.content_type.startswith("text/event-stream"):
                for payload in stream_payloads(reply.body):
                    walk(root(wire, payload), payload, shapes[(wire, "stream")])
            else:
                try:
                    walk("body", json.loads(reply.body), shapes[(wire, "complete")])
                except ValueError:
                    continue
    return shapes


def mocked(wire_name: str) -> dict[str, dict[str, list[set[str]]]]:
    wire = WIRES[wire_name]
    shapes: dict[str, dict[str, list[set[str]]]] = {
        "stream": defaultdict(list),
        "complete": defaultdict(list),
    }
    for number, turn in enumerate(TURNS):
        answer = make_answer(turn, number, "mock-model", 4, REQUEST)
        body = b"".join(wire.stream(answer)) + wire.error_event("boom", 3)
        for payload in stream_payloads(body):
            walk(root(wire_name, payload), payload, shapes["stream"])
        walk("body", json.loads(wire.complete(answer)), shapes["complete"])
        walk("errbody", json.loads(wire.error_body(429, "slow down", 1.0)), shapes["complete"])
    return shapes


@pytest.fixture(scope="module")
def recordings() -> dict[tuple[str, str], dict[str, list[set[str]]]]:
    if not SHARED.is_dir():
        pytest.skip("no recordings at ../shared/conformance/providers")
    return recorded()


@pytest.mark.parametrize("mode", ["stream", "complete"])
@pytest.mark.parametrize(
    "wire", [w for w in WIRES if w not in ("bedrock", "bedrock_converse")]
)  # binary framing (Converse's shapes are checked against botocore's service model)
def test_every_key_is_one_the_real_api_sends(wire: str, mode: str, recordings: Any) -> None:
    real = recordings[(wire, mode)]
    problems = []
    for path, instances in sorted(mocked(wire)[mode].items()):
        if path not in real:
            if not any(path.startswith(prefix) for prefix in NOT_RECORDED):
                problems.append(f"{path}: never in the recordings")
            continue
        mine = set().union(*instances)
        always_mine = set.intersection(*instances)
        theirs = set().union(*real[path])
        counts = Counter(key for keys in real[path] for key in keys)
        usual = {key for key, n in counts.items() if n >= REQUIRED_SHARE * len(real[path])}
        extra = mine - theirs - EXTRA_KEYS.get((wire, path), set())
        missing = usual - always_mine - EXCUSED_MISSING.get((wire, path), set())
        if extra:
            problems.append(f"{path}: keys the real API never sends: {sorted(extra)}")
        if missing:
            problems.append(f"{path}: keys the real API always sends: {sorted(missing)}")
    assert not problems, "\n".join(problems)


def _item_sequences(payloads: list[Any]) -> dict[str, list[tuple[str, ...]]]:
    """Per output item type: its events' types in order, repeated deltas collapsed."""
    by_index: dict[int, list[str]] = defaultdict(list)
    kinds: dict[int, str] = {}
    out: dict[str, list[tuple[str, ...]]] = defaultdict(list)
    for payload in payloads:
        kind = payload.get("type", "")
        if kind == "response.created":
            for index, events in sorted(by_index.items()):
                out[kinds.get(index, "")].append(tuple(events))
            by_index.clear()
            kinds.clear()
        index = payload.get("output_index")
        if index is None:
            continue
        if kind == "response.output_item.added":
            kinds[index] = payload["item"]["type"]
        events = by_index[index]
        if not events or events[-1] != kind:
            events.append(kind)
    for index, events in sorted(by_index.items()):
        out[kinds.get(index, "")].append(tuple(events))
    return out


def test_responses_events_come_in_the_recorded_order() -> None:
    if not SHARED.is_dir():
        pytest.skip("no recordings")
    real: dict[str, Counter[tuple[str, ...]]] = defaultdict(Counter)
    for relative in _files():
        steps, _ = plan(relative)
        for wire, reply in steps:
            if wire == "openai_responses" and reply.content_type.startswith("text/event"):
                for kind, sequences in _item_sequences(stream_payloads(reply.body)).items():
                    real[kind].update(sequences)
    wire = WIRES["openai_responses"]
    for number, turn in enumerate(TURNS):
        answer = make_answer(turn, number, "mock-model", 4, REQUEST)
        payloads = stream_payloads(b"".join(wire.stream(answer)))
        numbers = [payload["sequence_number"] for payload in payloads]
        assert numbers == list(range(len(payloads)))
        for kind, sequences in _item_sequences(payloads).items():
            for sequence in sequences:
                assert sequence in real[kind], (kind, sequence, real[kind].most_common(2))
