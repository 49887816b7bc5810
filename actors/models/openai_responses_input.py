"""Troupe's messages as OpenAI Responses input items: content runs become
``message`` items, and tool calls, tool results and the model's own reasoning
(sent back with its encrypted content) become items of their own, in order.
"""

from __future__ import annotations

from typing import Any

from actors.models.adapter import encode, result_text, strict_schema
from actors.models.media import data_url, document_media, document_name, image_url, refuse
from protocol.llm import (
    AudioPart,
    DocumentPart,
    ImagePart,
    Message,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolDefinition,
    ToolResult,
)

PROVIDER = "openai"


def content_block(role: str, part: Any) -> dict[str, Any] | None:
    if type(part) is TextPart:
        kind = "output_text" if role == "assistant" else "input_text"
        return {"type": kind, "text": part.text}
    if type(part) is ImagePart:
        return {
            "type": "input_image",
            "image_url": image_url(part),
            "detail": part.detail or "auto",
        }
    if type(part) is AudioPart:
        # The Responses API's message content has no audio part (Chat Completions has).
        raise refuse("openai_responses", "audio (use the openai_chat wire with an audio model)")
    if type(part) is DocumentPart:
        if part.data is None:
            return {"type": "input_file", "file_url": part.url or ""}
        data = data_url(document_media(part), part.data)
        return {"type": "input_file", "filename": document_name(part), "file_data": data}
    return None


def _output(part: ToolResult) -> str | list[dict[str, Any]]:
    """A function call's output: its text, or with pictures a list of input_text
    and input_image items (what ``function_call_output`` takes)."""
    text = result_text(part)
    if not part.images:
        return text
    images = [content_block("user", image) or {} for image in part.images]
    return [{"type": "input_text", "text": text}, *images]


def message_items(message: Message) -> list[dict[str, Any]]:
    """One message's input items: content runs become messages; tool calls, results
    and reasoning are items of their own, in the order they came."""
    if message.role == "system":
        return []
    items: list[dict[str, Any]] = []
    pending: list[dict[str, Any]] = []

    def flush() -> None:
        if not pending:
            return
        content: Any = list(pending)
        if message.role == "assistant":
            # An earlier answer goes back as an easy input message with text content,
            # the form the API's typed params take without the output item's id.
            content = "".join(block.get("text", "") for block in pending)
        items.append({"type": "message", "role": message.role, "content": content})
        pending.clear()

    for part in message.content:
        if type(part) is ToolCall:
            flush()
            items.append(
                {
                    "type": "function_call",
                    "call_id": part.id,
                    "name": part.name,
                    "arguments": part.raw_arguments or encode(part.arguments).decode(),
                }
            )
        elif type(part) is ToolResult:
            flush()
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": part.tool_call_id,
                    "output": _output(part),
                }
            )
        elif type(part) is ThinkingPart:
            flush()
            if part.provider == PROVIDER and part.id and part.signature:
                summary = [{"type": "summary_text", "text": part.text}] if part.text else []
                items.append(
                    {
                        "type": "reasoning",
                        "id": part.id,
                        "summary": summary,
                        "encrypted_content": part.signature,
                    }
                )
        else:
            block = content_block(message.role, part)
            if block is not None:
                pending.append(block)
    flush()
    return items


def tool_item(tool: ToolDefinition) -> dict[str, Any]:
    # Responses makes tools strict unless told otherwise; a schema strict mode refuses
    # would fail the request, so strict is said explicitly either way.
    return {
        "type": "function",
        "name": tool.name,
        "description": tool.description,
        "parameters": tool.parameters,
        "strict": strict_schema(tool.parameters),
    }


def after_last_answer(messages: list[Message]) -> list[Message]:
    """The messages after the model's last answer: what a request that continues a
    stored response (``previous_response_id``) sends."""
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].role == "assistant":
            return messages[index + 1 :]
    return [m for m in messages if m.role != "system"]
