"""Pictures in tool results: the size cap when a result is made, and what a model
that takes no images reads instead when a request is built.

A result keeps its images in the history whatever the model, so a later switch to
a model that takes images shows them, and a switch away turns them into a note
(the decision is the request's, from the model catalog's ``supports_vision``).
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from actors.models.client.catalog import get_model_info
from protocol.llm import ImagePart, Message, ToolResult


def within_cap(images: Sequence[ImagePart], cap: int) -> tuple[list[ImagePart], list[str]]:
    """The images at most ``cap`` bytes each, and a note for each one left out."""
    kept: list[ImagePart] = []
    notes: list[str] = []
    for image in images:
        size = len(image.data or b"")
        if size > cap:
            notes.append(
                f"[an image of {size} bytes ({image.media_type or 'unknown type'}) is not "
                f"shown: over the {cap}-byte limit for images (max_image_bytes)]"
            )
        else:
            kept.append(image)
    return kept, notes


def takes_images(model: str) -> bool:
    """Whether the catalog says ``model`` takes images (an unknown model: no)."""
    info = get_model_info(model)
    return info is not None and info.supports_vision


def without_images(messages: Sequence[Message], model: str) -> list[Message]:
    """``messages`` with each tool result's images replaced by a note, for a
    model that takes none (the messages without images are the same objects)."""
    out: list[Message] = []
    for message in messages:
        if not any(isinstance(part, ToolResult) and part.images for part in message.content):
            out.append(message)
            continue
        parts = [
            _described(part, model) if isinstance(part, ToolResult) and part.images else part
            for part in message.content
        ]
        out.append(msgspec.structs.replace(message, content=parts))
    return out


def _described(result: ToolResult, model: str) -> ToolResult:
    count = len(result.images)
    what = "the image is" if count == 1 else f"the {count} images are"
    note = f"[{what} not shown: the model {model} does not take images]"
    content = result.content
    shown = content if isinstance(content, str) else msgspec.json.encode(content).decode()
    text = f"{shown}\n{note}"
    return msgspec.structs.replace(result, content=text, images=[])
