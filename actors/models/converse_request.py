"""Unified messages as Bedrock Converse content blocks (``ContentBlock`` in AWS's API).

Converse names each block by its one key (``text``, ``image``, ``document``,
``toolUse``, ``toolResult``, ``reasoningContent``, ...); binary data goes as base64
``bytes`` (the JSON form of a blob), and S3 objects by ``s3Location``. Converse
fetches no web URLs, so an image or document given by an http URL is refused with a
typed error rather than dropped. Tool results ride in user turns; consecutive
same-role turns are merged, as the API wants user and assistant to alternate.
"""

from __future__ import annotations

import re
from typing import Any

from actors.models.adapter import encode
from actors.models.media import b64, refuse
from protocol.llm import (
    AudioPart,
    DocumentPart,
    ImagePart,
    Message,
    RedactedThinkingPart,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolResult,
)

WIRE = "bedrock_converse"
PROVIDER = "bedrock"

IMAGE_FORMATS = {
    "image/png": "png", "image/jpeg": "jpeg", "image/jpg": "jpeg",
    "image/gif": "gif", "image/webp": "webp",
}  # fmt: skip
DOCUMENT_FORMATS = {
    "application/pdf": "pdf", "text/csv": "csv", "application/msword": "doc",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
    "application/vnd.ms-excel": "xls",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "xlsx",
    "text/html": "html", "text/plain": "txt", "text/markdown": "md",
}  # fmt: skip
AUDIO_FORMATS = {
    "audio/mpeg": "mp3", "audio/mp3": "mp3", "audio/wav": "wav", "audio/x-wav": "wav",
    "audio/wave": "wav", "audio/ogg": "ogg", "audio/opus": "opus", "audio/flac": "flac",
    "audio/aac": "aac", "audio/mp4": "mp4", "audio/webm": "webm", "audio/m4a": "m4a",
}  # fmt: skip
_NAME_REFUSED = re.compile(r"[^A-Za-z0-9\s\-()\[\]]+")


def _source(data: bytes | None, url: str | None, what: str) -> dict[str, Any]:
    if data is not None:
        return {"bytes": b64(data)}
    if url and url.startswith("s3://"):
        return {"s3Location": {"uri": url}}
    raise refuse(WIRE, f"{what} by URL (give the bytes, or an s3:// URI)")


def _image(part: ImagePart) -> dict[str, Any]:
    media = part.media_type or "image/png"
    image_format = IMAGE_FORMATS.get(media)
    if image_format is None:
        raise refuse(WIRE, f"{media} images (png, jpeg, gif or webp)")
    return {"image": {"format": image_format, "source": _source(part.data, part.url, "images")}}


def document_name(part: DocumentPart) -> str:
    """A name Converse accepts: letters, digits, single spaces, hyphens, parentheses
    and square brackets (it refuses the rest, dots included)."""
    stem = (part.file_name or "document").rsplit(".", 1)[0]
    name = " ".join(_NAME_REFUSED.sub("-", stem).split())
    return name[:200] or "document"


def _document_format(part: DocumentPart) -> str:
    media = part.media_type or ""
    if media in DOCUMENT_FORMATS:
        return DOCUMENT_FORMATS[media]
    extension = (part.file_name or "").rsplit(".", 1)[-1].lower()
    if extension in DOCUMENT_FORMATS.values():
        return extension
    if not media and not part.file_name:
        return "pdf"
    raise refuse(WIRE, f"{media or extension} documents ({', '.join(DOCUMENT_FORMATS.values())})")


def _document(part: DocumentPart) -> dict[str, Any]:
    block = {
        "format": _document_format(part),
        "name": document_name(part),
        "source": _source(part.data, part.url, "documents"),
    }
    return {"document": block}


def _audio(part: AudioPart) -> dict[str, Any]:
    media = part.media_type or "audio/wav"
    audio_format = AUDIO_FORMATS.get(media)
    if audio_format is None:
        raise refuse(WIRE, f"{media} audio")
    return {"audio": {"format": audio_format, "source": _source(part.data, part.url, "audio")}}


def _tool_result(part: ToolResult) -> dict[str, Any]:
    content = part.content
    if isinstance(content, dict):
        blocks: list[dict[str, Any]] = [{"json": content}]
    else:
        text = content if isinstance(content, str) else encode(content).decode()
        blocks = [{"text": text or "(no output)"}]
    blocks.extend(_image(image) for image in part.images)
    status = "error" if part.is_error else "success"
    return {"toolResult": {"toolUseId": part.tool_call_id, "content": blocks, "status": status}}


def _thinking(part: ThinkingPart) -> dict[str, Any] | None:
    """Reasoning goes back signed only to Bedrock; another provider's is plain text."""
    if part.provider not in (None, PROVIDER) or not part.signature:
        return {"text": part.text} if part.text else None
    return {"reasoningContent": {"reasoningText": {"text": part.text, "signature": part.signature}}}


def content_block(part: Any) -> dict[str, Any] | None:
    kind = type(part)
    if kind is TextPart:
        return {"text": part.text} if part.text else None
    if kind is ToolCall:
        return {"toolUse": {"toolUseId": part.id, "name": part.name, "input": part.arguments}}
    if kind is ToolResult:
        return _tool_result(part)
    if kind is ThinkingPart:
        return _thinking(part)
    if kind is RedactedThinkingPart:
        if part.provider not in (None, PROVIDER):
            return None
        return {"reasoningContent": {"redactedContent": part.data}}
    if kind is ImagePart:
        return _image(part)
    if kind is DocumentPart:
        return _document(part)
    if kind is AudioPart:
        return _audio(part)
    return None


def message_blocks(message: Message) -> tuple[str, list[dict[str, Any]]]:
    """(role, blocks) of one message; system and developer turns go in ``system``."""
    if message.role in ("system", "developer"):
        return "user", []
    role = "assistant" if message.role == "assistant" else "user"
    return role, [block for part in message.content if (block := content_block(part)) is not None]
