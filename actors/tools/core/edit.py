"""edit_file: exact search and replace, with a whitespace-tolerant fallback.

The exact match comes first. Only when the text is not found at all does the tool
try a looser match (each line trimmed, runs of spaces collapsed, typographic
quotes and dashes folded to ASCII), and it says so in its answer, so the model
knows its text was not quite what the file holds.
"""

from __future__ import annotations

from typing import Annotated

import msgspec

from actors.tools.core.context import ToolContext
from actors.tools.paths import PathDeclaration
from actors.tools.registry import Tool, ToolFailure
from actors.tools.tool import DiffFields, OutputLimits
from protocol.environment import ReadFile, WriteFile


class EditFileParams(msgspec.Struct, frozen=True):
    file_path: Annotated[str, msgspec.Meta(description="File to edit")]
    old_string: Annotated[str, msgspec.Meta(description="Exact text to find")]
    new_string: Annotated[str, msgspec.Meta(description="Replacement text")]
    replace_all: Annotated[bool, msgspec.Meta(description="Replace every occurrence")] = False


def _loose(line: str) -> str:
    from actors.tools.apply_patch.matcher import normalise_loosely  # with a loose match only

    return " ".join(normalise_loosely(line).split())


def loose_spans(text: str, old: str) -> list[tuple[int, int]]:
    """Character spans of whole-line blocks matching ``old`` loosely."""
    wanted = [_loose(line) for line in old.strip("\n").split("\n")]
    if not any(wanted):
        return []
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    spans = []
    for first in range(len(lines) - len(wanted) + 1):
        block = lines[first : first + len(wanted)]
        if all(_loose(have) == want for have, want in zip(block, wanted, strict=True)):
            end = starts[first + len(wanted)]
            last = block[-1]
            end -= len(last) - len(last.rstrip("\r\n"))
            spans.append((starts[first], end))
    return spans


def _replace_spans(text: str, spans: list[tuple[int, int]], new: str) -> str:
    pieces, cursor = [], 0
    for start, end in spans:
        pieces += [text[cursor:start], new]
        cursor = end
    return "".join([*pieces, text[cursor:]])


async def edit_file(arguments: EditFileParams, context: ToolContext) -> str:
    if arguments.old_string == "":
        raise ToolFailure("old_string must not be empty; use write_file to create a file.")
    if arguments.old_string == arguments.new_string:
        raise ToolFailure("old_string and new_string are the same; nothing to change.")
    target = context.path(arguments.file_path)
    content = await context.environment.ask(ReadFile(target, exact=True, guard=context.guard))
    text, path = content.text, content.path
    count = text.count(arguments.old_string)
    note = ""
    if count:
        if count > 1 and not arguments.replace_all:
            raise ToolFailure(
                f"old_string occurs {count} times in {path}. Provide more surrounding "
                "context to make it unique, or set replace_all to replace every occurrence."
            )
        limit = -1 if arguments.replace_all else 1
        updated = text.replace(arguments.old_string, arguments.new_string, limit)
        replaced = count if arguments.replace_all else 1
    else:
        spans = loose_spans(text, arguments.old_string)
        if not spans:
            raise ToolFailure(
                f"old_string was not found in {path}. Read the file again and copy the "
                "text exactly, including whitespace."
            )
        if len(spans) > 1 and not arguments.replace_all:
            raise ToolFailure(
                f"old_string matched {len(spans)} places in {path} when whitespace is "
                "ignored. Provide more context to make it unique, or set replace_all."
            )
        updated = _replace_spans(text, spans, arguments.new_string)
        replaced = len(spans)
        note = " (matched with a whitespace-tolerant fallback: the file's text differed)"
    await context.environment.ask(WriteFile(target, updated, guard=context.guard))
    plural = "occurrence" if replaced == 1 else "occurrences"
    return f"Replaced {replaced} {plural} in {path}{note}"


EDIT_FILE = Tool(
    "edit_file",
    "Replace an exact string occurrence in a file. old_string must match exactly and be "
    "unique unless replace_all is set.",
    edit_file,
    EditFileParams,
    category="write",
    paths=PathDeclaration(("file_path",)),
    kind="edit",
    limits=OutputLimits(10_000, "tail"),
    agentic="writes_files",
    hook_names=("Edit",),
    diff=DiffFields(path="file_path", new="new_string", old="old_string"),
)
