"""A small MCP server built with the official SDK, for the tests and the bench.

``python fixture_server.py`` serves over stdio; ``python fixture_server.py http PORT``
over Streamable HTTP. ``MCP_PID_FILE`` names a file the server appends its pid to,
so a test can check the process is gone.
"""

from __future__ import annotations

import base64
import os
import sys
import time
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ImageContent, ToolAnnotations

app = MCPServer("fixture")
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\nfixture").decode()


@app.tool(annotations=ToolAnnotations(read_only_hint=True))
def echo(text: str) -> str:
    """Return the text as it came."""
    return f"echo: {text}"


@app.tool(annotations=ToolAnnotations(destructive_hint=True))
def wipe(path: str) -> str:
    """Delete a file (destructive)."""
    Path(path).unlink()
    return f"deleted {path}"


@app.tool()
def note(text: str) -> str:
    """Write nothing, but carry no annotation (a write by default)."""
    return f"noted {text}"


@app.tool()
def noop() -> str:
    """Do nothing (the bench's MCP round)."""
    return "ok"


@app.tool()
def hang(seconds: float) -> str:
    """Sleep, then answer (a call to kill the server under). ``MCP_HANG_FILE``
    names a file created when the call has begun."""
    marker = os.environ.get("MCP_HANG_FILE")
    if marker:
        Path(marker).write_text(str(os.getpid()))
    time.sleep(seconds)
    return "woke up"


@app.tool()
def picture() -> ImageContent:
    """An image result."""
    return ImageContent(type="image", data=PNG, mime_type="image/png")


@app.tool()
def measure(word: str) -> dict[str, int]:
    """Structured content."""
    return {"length": len(word)}


@app.tool()
def fail(reason: str) -> str:
    """Always an error result."""
    raise ToolError(reason)


def main() -> None:
    pid_file = os.environ.get("MCP_PID_FILE")
    if pid_file:
        with open(pid_file, "a") as out:
            out.write(f"{os.getpid()}\n")
    if len(sys.argv) > 2 and sys.argv[1] == "http":
        app.run(transport="streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        app.run()


if __name__ == "__main__":
    main()
