"""Text tool calling as a translation around one model call (forge-agent-loop-prd
FR3): the loop keeps working with native :class:`~protocol.llm.ToolCall` parts and
:class:`~protocol.llm.ToolResult` messages; only the request that goes out and the
answer that comes back are rewritten.

Out: the tools leave the request and become a section of the system prompt; earlier
calls and results become text (calls as JSON, always). Back: the answer's text is
parsed into calls; a call that cannot be read becomes a call whose
``arguments_error`` the tool registry answers with an error the model can correct.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from actors.models.adapter import result_text
from actors.models.errors import InvalidRequestError, ModelError
from actors.provider_wires import of_provider
from actors.session.text_calls.prompt import render_call, render_result, tools_prompt
from protocol.llm import (
    FinishReason,
    Message,
    Part,
    Request,
    Response,
    TextPart,
    ToolCall,
    ToolDefinition,
    ToolResult,
    Usage,
)
from protocol.session import ToolCalling

__all__ = ["ToolCalling", "Translations", "rejects_tools", "text_request", "text_response"]

PROVIDER = "text_calls"
INVALID_CALL = "invalid_tool_call"
"""The name a call gets when its tool's name could not be read either."""


def rejects_tools(error: ModelError, request: Request) -> bool:
    """The server refused the request because it carried tools: a 400-class
    refusal from an OpenAI-compatible server that names them."""
    return (
        bool(request.tools)
        and isinstance(error, InvalidRequestError)
        and (wire := of_provider(error.provider)) is not None
        and wire.tools_may_be_refused
        and "tool" in str(error).lower()
    )


class Translations:
    """The text form of each history message, kept while the message is in the
    history: the same object each round, so the wire adapter's conversation cache
    (keyed by identity) encodes only what is new, as on the native path."""

    def __init__(self) -> None:
        self._kept: dict[int, tuple[Message, Message]] = {}
        self._section: tuple[list[ToolDefinition], str] | None = None

    def section(self, tools: list[ToolDefinition]) -> str:
        if self._section is None or self._section[0] != tools:
            self._section = (tools, tools_prompt(tools))
        return self._section[1]

    def translate(self, messages: list[Message], names: dict[str, str]) -> list[Message]:
        kept: dict[int, tuple[Message, Message]] = {}
        out: list[Message] = []
        for message in messages:
            if message.role == "assistant":
                for part in message.content:
                    if type(part) is ToolCall:
                        names[part.id] = part.name
            found = self._kept.get(id(message))
            if found is None or found[0] is not message:
                found = (message, _translate(message, names))
            kept[id(message)] = found
            out.append(found[1])
        self._kept = kept
        return out


def _translate(message: Message, names: dict[str, str]) -> Message:
    if message.role == "assistant":
        return _assistant(message, names)
    if message.role == "tool":
        return _results(message, names)
    return message


def text_request(request: Request, translations: Translations | None = None) -> Request:
    """The same request without native tools: the tool list and call format go into
    the system prompt, earlier calls and results into plain text."""
    translations = translations or Translations()
    section = translations.section(request.tools)
    lead = request.messages[0] if request.messages else None
    names: dict[str, str] = {}
    if lead is not None and lead.role in ("system", "developer"):
        head = [Message(lead.role, [TextPart(f"{lead.text}\n\n{section}")])]
        rest = request.messages[1:]
    else:
        head, rest = [Message.system(section)], request.messages
    messages = head + translations.translate(rest, names)
    return Request(
        model=request.model,
        messages=messages,
        max_tokens=request.max_tokens,
        temperature=request.temperature,
        top_p=request.top_p,
        stop_sequences=request.stop_sequences,
        reasoning_effort=request.reasoning_effort,
        provider_options=request.provider_options,
        wire_options=request.wire_options,
    )


def _assistant(message: Message, names: dict[str, str]) -> Message:
    pieces: list[str] = []
    for part in message.content:
        if type(part) is TextPart and part.text:
            pieces.append(part.text)
        elif type(part) is ToolCall:
            names[part.id] = part.name
            pieces.append(render_call(part.name, part.arguments))
    return Message("assistant", [TextPart("\n".join(pieces))])


def _results(message: Message, names: dict[str, str]) -> Message:
    blocks = [
        render_result(
            part.name or names.get(part.tool_call_id, "tool"), result_text(part), part.is_error
        )
        for part in message.content
        if type(part) is ToolResult
    ]
    # pictures a result returned go with the text, as a user message's image parts
    images = [image for part in message.content if type(part) is ToolResult
              for image in part.images]  # fmt: skip
    return Message("user", [TextPart("\n".join(blocks)), *images])


def text_response(
    text: str, model: str, definitions: Sequence[ToolDefinition], usage: Usage | None = None,
    response_id: str = "",
) -> Response:  # fmt: skip
    """The answer's text read back as native calls (and the prose around them)."""
    sole = {
        d.name: d.parameters["required"][0]
        for d in definitions
        if len(d.parameters.get("required") or ()) == 1
    }
    from actors.session.text_calls.parser import parse_text_calls  # a text-calling model's only

    parsed = parse_text_calls(text, [d.name for d in definitions], sole)
    content: list[Part] = []
    prose = parsed.text.strip()
    if prose:
        content.append(TextPart(prose))
    for index, call in enumerate(parsed.calls):
        raw = json.dumps(call.arguments, ensure_ascii=False)
        content.append(ToolCall(f"text_call_{index}", call.name, call.arguments, raw))
    for index, error in enumerate(parsed.errors):
        content.append(
            ToolCall(
                f"text_error_{index}",
                error.name or INVALID_CALL,
                raw_arguments="",
                arguments_error=f"{error.message}. Write the call again as "
                '<tool_call>{"name": ..., "arguments": {...}}</tool_call> with valid JSON.',
            )
        )
    calls = len(parsed.calls) + len(parsed.errors)
    reason = FinishReason("tool_calls" if calls else "stop", "text_calls")
    message = Message("assistant", content or [TextPart("")])
    return Response(response_id, model, PROVIDER, message, reason, usage or Usage())
