"""read_file, write_file, read_many_files and list_dir."""

from __future__ import annotations

from typing import Annotated

import msgspec

from actors.kernel import Rejection
from actors.tools.core.context import ToolContext
from actors.tools.paths import PathDeclaration
from actors.tools.registry import Tool, ToolOutput
from actors.tools.tool import DiffFields, OutputLimits
from protocol.environment import (
    DEFAULT_READ_LIMIT,
    FileContent,
    ImageFile,
    ListDirectory,
    ReadFile,
    WriteFile,
)
from protocol.llm import ImagePart

Path = Annotated[
    str,
    msgspec.Meta(description="Path of the file (absolute, or relative to the working directory)"),
]


class ReadFileParams(msgspec.Struct, frozen=True):
    file_path: Path
    offset: Annotated[int | None, msgspec.Meta(description="1-based line to start from")] = None
    limit: Annotated[int | None, msgspec.Meta(description="Maximum lines to read")] = None


async def read_file(arguments: ReadFileParams, context: ToolContext) -> str | ToolOutput:
    content = await context.environment.ask(
        ReadFile(
            context.path(arguments.file_path),
            arguments.offset,
            arguments.limit or DEFAULT_READ_LIMIT,
            guard=context.guard,
            images=True,
        )
    )
    if content.image is not None:
        return image_output(content.path, content.image)
    if content.total_lines == 0:
        return f"{content.path} is empty."
    return _with_note(content)


def image_output(path: str, image: ImageFile) -> ToolOutput:
    """An image file for the model (coding-agent-loop-spec 3.3: "for image files,
    return the image data for multimodal models"): a line naming it, and the
    picture (the session drops it, with a note, for a model that takes none or
    when it is over ``max_image_bytes``)."""
    facts = f"{image.media_type}, {image.width}x{image.height}, {image.size} bytes"
    if image.data is None:
        return ToolOutput(f"Image file {path} ({facts}): too large to send to the model.")
    picture = ImagePart(data=image.data, media_type=image.media_type)
    return ToolOutput(f"Image file {path} ({facts}).", (picture,))


def _with_note(content: FileContent) -> str:
    """A file that was not UTF-8 says so above its text, with the encoding assumed,
    so a guessed character is not taken for what is stored (editing it is refused:
    edits need the exact text)."""
    if content.encoding_note is None:
        return content.text
    return f"[note: {content.encoding_note}]\n{content.text}"


class WriteFileParams(msgspec.Struct, frozen=True):
    file_path: Path
    content: Annotated[str, msgspec.Meta(description="The full new content of the file")]


async def write_file(arguments: WriteFileParams, context: ToolContext) -> str:
    written = await context.environment.ask(
        WriteFile(context.path(arguments.file_path), arguments.content, guard=context.guard)
    )
    return f"Wrote {written.bytes_written} bytes to {written.path}"


class ReadManyFilesParams(msgspec.Struct, frozen=True):
    paths: Annotated[list[str], msgspec.Meta(description="Files to read, in order")]


async def read_many_files(arguments: ReadManyFilesParams, context: ToolContext) -> str:
    """Each file under a header; a file that cannot be read says why, in its place."""
    sections = []
    for path in arguments.paths:
        try:
            request = ReadFile(context.path(path), limit=None, guard=context.guard)
            content = await context.environment.ask(request)
            sections.append(f"==> {content.path} <==\n{_with_note(content)}")
        except Rejection as refusal:
            sections.append(f"==> {path} <==\n[error: {refusal}]")
    return "\n\n".join(sections)


class ListDirParams(msgspec.Struct, frozen=True):
    path: Annotated[str, msgspec.Meta(description="Directory to list")] = "."
    depth: Annotated[int, msgspec.Meta(description="Levels to descend (1 = entries only)")] = 1


async def list_dir(arguments: ListDirParams, context: ToolContext) -> str:
    entries = await context.environment.ask(
        ListDirectory(context.path(arguments.path), arguments.depth, guard=context.guard)
    )
    if not entries:
        return f"{arguments.path} is empty."
    return "\n".join(
        f"{entry.name}/" if entry.is_dir else f"{entry.name} ({entry.size} bytes)"
        for entry in entries
    )


READ_FILE = Tool(
    "read_file",
    "Read a file from the filesystem. Returns line-numbered content ('NNN | line');"
    " a file that is not UTF-8 starts with a note naming the encoding assumed. An image"
    " (PNG, JPEG, GIF, WebP) is returned as the image itself.",
    read_file,
    ReadFileParams,
    category="read",
    paths=PathDeclaration(("file_path",)),
    kind="read",
    limits=OutputLimits(50_000, "head_tail"),
    hook_names=("Read",),
)
WRITE_FILE = Tool(
    "write_file",
    "Write content to a file. Creates the file and parent directories if needed.",
    write_file,
    WriteFileParams,
    category="write",
    paths=PathDeclaration(("file_path",)),
    kind="edit",
    limits=OutputLimits(1_000, "tail"),
    agentic="writes_files",
    hook_names=("Write",),
    diff=DiffFields(path="file_path", new="content"),
)
READ_MANY_FILES = Tool(
    "read_many_files",
    "Read several files at once; each comes under a '==> path <==' header.",
    read_many_files,
    ReadManyFilesParams,
    category="read",
    paths=PathDeclaration(("paths",)),
    kind="read",
    limits=OutputLimits(50_000, "head_tail"),
    hook_names=("Read",),
)
LIST_DIR = Tool(
    "list_dir",
    "List a directory's entries (directories end in '/'), optionally several levels deep.",
    list_dir,
    ListDirParams,
    category="read",
    paths=PathDeclaration(("path",), defaults={"path": "."}),
    kind="read",
    limits=OutputLimits(20_000, "tail"),
    hook_names=("LS",),
)
