"""Tool calls written as text, for models and servers without native tool calling
(forge-agent-loop-prd FR3, adr-040's ReAct addendum).

Four shapes are read, because small and local models produce all of them:

- ``<tool_call>{"name": "read_file", "arguments": {"path": "a.py"}}</tool_call>``
  (the format Troupe asks for; also ``<function_call>``, ``<tool_use>`` and
  ``<function=read_file>{...}</function>``);
- ``<invoke name="read_file"><parameter name="path">a.py</parameter></invoke>``;
- a tag named after a known tool: ``<read_file><path>a.py</path></read_file>``;
- ReAct: ``Thought: ...`` / ``Action: read_file`` / ``Action Input: {...}``, with
  anything from a made-up ``Observation:`` on ignored.

A call that cannot be read becomes a :class:`TextCallError` whose message the model
can act on, never an exception.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Collection, Mapping
from typing import Any

import msgspec

from actors.session.text_calls.objects import ArgumentsError, first_object, load_object

_TAGGED = re.compile(r"<(tool_call|function_call|tool_use)>(.*?)(</\1>|$)", re.DOTALL)
_FUNCTION_EQUALS = re.compile(r"<function=([\w.-]+)>(.*?)(</function>|$)", re.DOTALL)
_INVOKE = re.compile(r"<invoke\s+name=[\"']([\w.-]+)[\"']\s*>(.*?)(</invoke>|$)", re.DOTALL)
_PARAMETER = re.compile(r"<parameter\s+name=[\"']([\w.-]+)[\"']\s*>(.*?)</parameter>", re.DOTALL)
_CHILD = re.compile(r"<([A-Za-z_][\w.-]*)>(.*?)</\1>", re.DOTALL)
_ACTION = re.compile(r"^[ \t]*Action[ \t]*:[ \t]*(.*)$", re.MULTILINE)
_ACTION_INPUT = re.compile(r"^[ \t]*Action[ \t]+Input[ \t]*:[ \t]*", re.MULTILINE)
_REACT_STOP = re.compile(r"^[ \t]*(Observation|Thought|Action|Final Answer)[ \t]*:", re.MULTILINE)
_THOUGHT = re.compile(
    r"^[ \t]*Thought[ \t]*:[ \t]*(.*?)(?=^[ \t]*(?:Action|Final Answer)[ \t]*:|\Z)",
    re.MULTILINE | re.DOTALL,
)
_FINAL = re.compile(r"^[ \t]*Final Answer[ \t]*:[ \t]*(.*)\Z", re.MULTILINE | re.DOTALL)
_FENCE = re.compile(r"^```[\w-]*\s*|\s*```\s*$")
_ARGUMENT_KEYS = ("arguments", "parameters", "args", "input", "tool_input")
_NAME_KEYS = ("name", "tool", "tool_name", "function")


class TextCall(msgspec.Struct, frozen=True):
    name: str
    arguments: dict[str, Any]


class TextCallError(msgspec.Struct, frozen=True):
    """A call that was meant but cannot be run; ``message`` is for the model."""

    message: str
    name: str | None = None


class ParsedText(msgspec.Struct, frozen=True):
    """An answer split into its calls, its errors and the prose around them."""

    calls: tuple[TextCall, ...] = ()
    errors: tuple[TextCallError, ...] = ()
    text: str = ""
    thought: str | None = None
    final_answer: str | None = None


class _Found(msgspec.Struct):
    start: int
    end: int
    call: TextCall | None = None
    error: TextCallError | None = None


def parse_text_calls(
    text: str, tool_names: Collection[str], sole_parameters: Mapping[str, str] | None = None
) -> ParsedText:
    """Every tool call in ``text``, in order. ``sole_parameters`` maps a tool with one
    required parameter to its name, so ``Action Input: src/a.py`` still works."""
    found = [*_tagged(text), *_function_equals(text), *_invoke(text)]
    found += _named_tags(text, tool_names, found)
    found += _react(text, sole_parameters or {}, found)
    found.sort(key=lambda item: item.start)
    kept: list[_Found] = []
    for item in found:
        if kept and item.start < kept[-1].end:
            continue  # nested in a call already read (a <tool_call> inside <function_calls>)
        kept.append(item)
    prose = _prose(text, kept)
    thought_match = _THOUGHT.search(text)
    final_match = _FINAL.search(text) if not kept else None
    return ParsedText(
        calls=tuple(item.call for item in kept if item.call is not None),
        errors=tuple(item.error for item in kept if item.error is not None),
        text=prose,
        thought=thought_match.group(1).strip() if thought_match else None,
        final_answer=final_match.group(1).strip() if final_match else None,
    )


def _tagged(text: str) -> list[_Found]:
    results = []
    for match in _TAGGED.finditer(text):
        body = _FENCE.sub("", match.group(2).strip())
        if not match.group(3):
            results.append(_error(match, f"<{match.group(1)}> is not closed (truncated call?)"))
            continue
        results.append(_from_body(match, body))
    return results


def _from_body(match: re.Match[str], body: str) -> _Found:
    if not body.lstrip().startswith("{"):
        name, _, rest = body.partition("\n")
        if rest.strip().startswith("{") and re.fullmatch(r"[\w.-]+", name.strip()):
            arguments, error, _ = first_object(rest)
            return _result(match, name.strip(), arguments, error)
        return _error(match, "a tool call must be a JSON object with a name and arguments")
    payload, error, _ = first_object(body)
    if payload is None:
        return _error(match, f"tool call not understood: {error}")
    name = next((payload[k] for k in _NAME_KEYS if isinstance(payload.get(k), str)), None)
    if name is None:
        return _error(match, 'a tool call needs a "name"')
    raw = next((payload[k] for k in _ARGUMENT_KEYS if k in payload), {})
    if isinstance(raw, str):
        try:
            raw = load_object(raw) if raw.strip() else {}
        except ArgumentsError as exc:
            return _error(match, f"{name}: {exc}", name)
    if not isinstance(raw, dict):
        return _error(match, f"{name}: arguments must be a JSON object", name)
    return _result(match, name, raw, None)


def _function_equals(text: str) -> list[_Found]:
    results = []
    for match in _FUNCTION_EQUALS.finditer(text):
        name = match.group(1)
        if not match.group(3):
            results.append(_error(match, f"<function={name}> is not closed", name))
            continue
        body = match.group(2).strip()
        arguments, error, _ = first_object(body) if body else ({}, None, 0)
        results.append(_result(match, name, arguments, error))
    return results


def _invoke(text: str) -> list[_Found]:
    results = []
    for match in _INVOKE.finditer(text):
        name = match.group(1)
        if not match.group(3):
            results.append(_error(match, f'<invoke name="{name}"> is not closed', name))
            continue
        arguments = {p.group(1): _value(p.group(2)) for p in _PARAMETER.finditer(match.group(2))}
        results.append(_result(match, name, arguments, None))
    return results


def _named_tags(text: str, tool_names: Collection[str], taken: list[_Found]) -> list[_Found]:
    if not tool_names:
        return []
    names = "|".join(re.escape(name) for name in sorted(tool_names, key=len, reverse=True))
    pattern = re.compile(rf"<({names})>(.*?)(</\1>|$)", re.DOTALL)
    results = []
    for match in pattern.finditer(text):
        if any(item.start <= match.start() < item.end for item in taken):
            continue
        name = match.group(1)
        if not match.group(3):
            results.append(_error(match, f"<{name}> is not closed (truncated call?)", name))
            continue
        body = match.group(2).strip()
        if body.startswith("{"):
            arguments, error, _ = first_object(body)
            results.append(_result(match, name, arguments, error))
            continue
        arguments = {child.group(1): _value(child.group(2)) for child in _CHILD.finditer(body)}
        results.append(_result(match, name, arguments, None))
    return results


def _react(text: str, sole: Mapping[str, str], taken: list[_Found]) -> list[_Found]:
    results = []
    for action in _ACTION.finditer(text):
        if any(item.start <= action.start() < item.end for item in taken):
            continue
        name = action.group(1).strip().strip("`'\"").removesuffix("()")
        found = _Found(action.start(), action.end())
        if not re.fullmatch(r"[\w.-]+", name):
            found.error = TextCallError(f"Action must be a tool name, got {name!r}")
            results.append(found)
            continue
        following = (
            _ACTION_INPUT.match(text, action.end() + 1) if action.end() < len(text) else None
        )
        if following is None:
            found.call = TextCall(name, {})
            results.append(found)
            continue
        stop = _REACT_STOP.search(text, following.end())
        raw = text[following.end() : stop.start() if stop else len(text)].strip()
        raw = _FENCE.sub("", raw).strip()
        found.end = stop.start() if stop else len(text)
        if stop is not None and stop.group(1) == "Observation":
            found.end = len(text)  # the model made up a result: nothing after it counts
        if raw.startswith("{"):
            arguments, error, _ = first_object(raw)
            found.call, found.error = _call_or_error(name, arguments, error)
        elif not raw:
            found.call = TextCall(name, {})
        elif name in sole:
            found.call = TextCall(name, {sole[name]: raw.strip("\"'")})
        else:
            found.error = TextCallError(
                f'{name}: Action Input must be a JSON object such as {{"parameter": "value"}}',
                name,
            )
        results.append(found)
    return results


def _value(raw: str) -> Any:
    if raw.startswith("\n"):  # a value written on lines of its own: drop that wrapping
        raw = raw[1:].removesuffix("\n")
    text = html.unescape(raw)
    stripped = text.strip()
    if stripped[:1] in ("{", "["):
        try:
            return json.loads(stripped)
        except ValueError:
            return text
    return text


def _call_or_error(
    name: str, arguments: dict[str, Any] | None, error: str | None
) -> tuple[TextCall | None, TextCallError | None]:
    if arguments is None:
        return None, TextCallError(f"{name}: {error}", name)
    return TextCall(name, arguments), None


def _result(
    match: re.Match[str], name: str, arguments: dict[str, Any] | None, error: str | None
) -> _Found:
    call, failure = _call_or_error(name, arguments, error)
    return _Found(match.start(), match.end(), call, failure)


def _error(match: re.Match[str], message: str, name: str | None = None) -> _Found:
    return _Found(match.start(), match.end(), None, TextCallError(message, name))


def _prose(text: str, found: list[_Found]) -> str:
    pieces, cursor = [], 0
    for item in found:
        pieces.append(text[cursor : item.start])
        cursor = item.end
    pieces.append(text[cursor:])
    prose = "".join(pieces)
    prose = re.sub(r"</?function_calls>", "", prose)
    prose = re.sub(r"^[ \t]*Thought[ \t]*:[ \t]*", "", prose, flags=re.MULTILINE)
    return prose.strip()
