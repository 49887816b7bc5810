"""Scripted model turns in each profile's own editing format."""

from __future__ import annotations

from typing import Any

import msgspec


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


def create_file(profile: str, path: str, content: str) -> dict[str, Any]:
    """OpenAI models add files with apply_patch; the others write them."""
    if profile == "openai":
        added = "".join(f"+{line}\n" for line in content.splitlines())
        return call(
            "apply_patch", patch=f"*** Begin Patch\n*** Add File: {path}\n{added}*** End Patch"
        )
    return call("write_file", file_path=path, content=content + "\n")


def edit_file(profile: str, path: str, old: str, new: str) -> dict[str, Any]:
    """OpenAI models edit with apply_patch; Anthropic and Gemini with edit_file."""
    if profile == "openai":
        return call(
            "apply_patch",
            patch=f"*** Begin Patch\n*** Update File: {path}\n@@\n-{old}\n+{new}\n*** End Patch",
        )
    return call("edit_file", file_path=path, old_string=old, new_string=new)


def turns(*steps: list[dict[str, Any]] | str) -> dict[str, Any]:
    """A script: each step is a list of tool calls or a final text."""
    listed = [{"text": s} if isinstance(s, str) else {"tool_calls": s} for s in steps]
    return {"turns": listed, "repeat": False}


def tool_names(body: dict[str, Any]) -> set[str]:
    """The tool names a request offered, whatever the wire format."""
    names: set[str] = set()
    for tool in body.get("tools", []):
        if "functionDeclarations" in tool:
            names.update(d["name"] for d in tool["functionDeclarations"])
        else:
            names.add(tool.get("name") or tool.get("function", {}).get("name"))
    return names


def body_text(body: Any) -> str:
    return msgspec.json.encode(body).decode()


def effort(body: dict[str, Any], profile: str) -> Any:
    """Where each wire carries the reasoning effort."""
    if profile == "openai":
        return body.get("reasoning", {}).get("effort")
    if profile == "gemini":
        return body.get("generationConfig", {}).get("thinkingConfig", {}).get("thinkingLevel")
    thinking = body.get("thinking") or {}
    return thinking.get("budget_tokens")
