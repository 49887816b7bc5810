"""The text tool-call parser against a corpus of model outputs, early detection
while streaming, and history rendered as valid JSON."""

from __future__ import annotations

import json

import pytest

from actors.session.text_calls import (
    CallWatch,
    parse_text_calls,
    render_call,
    render_result,
    tools_prompt,
)
from protocol.llm import ToolDefinition
from tests.session.text_calls_corpus import CASES, SOLE, TOOLS


def test_the_corpus_is_large_enough() -> None:
    assert len(CASES) >= 80
    assert len({case[0] for case in CASES}) == len(CASES)


@pytest.mark.parametrize(
    ("text", "calls", "errors"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_parse(text: str, calls: list, errors: list[str]) -> None:
    parsed = parse_text_calls(text, TOOLS, SOLE)
    assert [(call.name, call.arguments) for call in parsed.calls] == calls
    assert len(parsed.errors) == len(errors), parsed.errors
    for error, fragment in zip(parsed.errors, errors, strict=True):
        assert fragment in error.message


def test_prose_and_thought_survive() -> None:
    parsed = parse_text_calls(
        'Thought: check it\nAction: shell\nAction Input: {"command": "ls"}\nObservation: x',
        TOOLS,
    )
    assert parsed.thought == "check it"
    assert "Observation" not in parsed.text
    final = parse_text_calls("Thought: easy\nFinal Answer: 42", TOOLS)
    assert final.final_answer == "42" and not final.calls


UNKNOWABLE_EARLY = {"react-plain-string-sole", "react-quoted-string-sole", "react-no-input"}
"""A plain-text Action Input (or none) may go on: only the end of the stream ends it."""
EARLY = [c for c in CASES if c[2] and c[0] not in UNKNOWABLE_EARLY]


@pytest.mark.parametrize("case", EARLY, ids=[c[0] for c in EARLY])
def test_early_detection_fires_once_the_first_call_is_complete(case) -> None:
    _, text, _, _ = case
    watch = CallWatch(TOOLS)
    fired_at = None
    for index in range(0, len(text), 3):
        if watch.feed(text[index : index + 3]):
            fired_at = index + 3
            break
    assert fired_at is not None, "a complete call was never detected"
    # Whatever arrived when it fired already holds the first call, parsed whole.
    first = parse_text_calls(text[:fired_at], TOOLS, SOLE).calls
    assert first and first[0] == parse_text_calls(text, TOOLS, SOLE).calls[0]


def test_early_detection_waits_for_the_closing_brace() -> None:
    watch = CallWatch(TOOLS)
    assert not watch.feed('Action: shell\nAction Input: {"command": "echo }')
    assert not watch.feed(' still open"')
    assert watch.feed("}")


def test_no_false_alarm_on_plain_answers() -> None:
    for case in CASES:
        if not case[2] and not case[3]:
            watch = CallWatch(TOOLS)
            assert not watch.feed(case[1]), case[0]


def test_history_is_valid_json_and_parses_back() -> None:
    arguments = {"command": "echo 'single' \"double\" {brace}", "n": 1, "flag": True}
    rendered = render_call("shell", arguments)
    body = rendered.removeprefix("<tool_call>\n").removesuffix("\n</tool_call>")
    assert json.loads(body) == {"name": "shell", "arguments": arguments}
    assert "'flag'" not in rendered and "True" not in rendered
    assert parse_text_calls(rendered, TOOLS).calls[0].arguments == arguments
    assert render_result("shell", "ok", False) == '<tool_result name="shell">\nok\n</tool_result>'
    assert 'status="error"' in render_result("shell", "boom", True)


def test_tools_prompt_lists_every_tool_with_its_schema() -> None:
    definitions = [
        ToolDefinition("shell", "Run a command", {"type": "object", "properties": {}}),
        ToolDefinition("read_file", "Read a file"),
    ]
    prompt = tools_prompt(definitions)
    assert "<tool_call>" in prompt
    assert "- shell: Run a command" in prompt and "- read_file: Read a file" in prompt
