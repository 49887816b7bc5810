"""The integration smoke test's steps (coding-agent-loop-spec §9.13) and how each
is judged from the session's events, its history and the files it left.

Checks read events by ``kind`` and ``data`` only. :func:`mock_script` is the
scripted provider's side of the same steps, so the suite (and ``troupe smoke
--base-url`` against ``troupe mock-llm``) runs exactly what a real model is asked.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from protocol.wire import Event

BIG_FILE_CHARS = 100_000
TRUNCATION_MARKER = "Tool output was truncated"


@dataclass
class StepRun:
    """What one step produced."""

    workdir: Path
    events: list[Event] = field(default_factory=list)
    history: str = ""
    """The session's history as JSON: what the model was sent."""

    def data(self, kind: str) -> list[dict[str, Any]]:
        return [event.data for event in self.events if event.kind == kind]

    def outputs(self, tool: str | None = None) -> list[str]:
        return [
            str(d.get("output", ""))
            for d in self.data("tool_call_end")
            if tool is None or d.get("tool_name") == tool
        ]

    def read(self, name: str) -> str:
        try:
            return (self.workdir / name).read_text(errors="replace")
        except OSError:
            return ""


Check = Callable[[StepRun], tuple[bool, str]]


@dataclass(frozen=True)
class Step:
    name: str
    prompt: str
    check: Check
    steer: str | None = None
    prepare: Callable[[Path], None] | None = None


def _created(run: StepRun) -> tuple[bool, str]:
    text = run.read("hello.py")
    if not text:
        return False, "hello.py was not created"
    return "Hello" in text, "hello.py prints Hello" if "Hello" in text else "no 'Hello' in it"


def _edited(run: StepRun) -> tuple[bool, str]:
    text = run.read("hello.py")
    missing = [word for word in ("Hello", "Goodbye") if word not in text]
    return not missing, "hello.py has Hello and Goodbye" if not missing else f"missing {missing}"


def _shell(run: StepRun) -> tuple[bool, str]:
    ran = [o for o in run.outputs("shell") if "Hello" in o]
    if ran:
        return True, "a shell call printed Hello"
    return False, f"{len(run.outputs('shell'))} shell calls, none printed Hello"


def _write_big_file(workdir: Path) -> None:
    (workdir / "big.txt").write_text("x" * BIG_FILE_CHARS)


def _truncation(run: StepRun) -> tuple[bool, str]:
    full = max((len(o) for o in run.outputs()), default=0)
    marked = TRUNCATION_MARKER in run.history
    ok = full >= BIG_FILE_CHARS and marked
    return ok, f"event output {full} chars; model saw the marker: {'yes' if marked else 'no'}"


def _steering(run: StepRun) -> tuple[bool, str]:
    injected = bool(run.data("steering_injected"))
    files = [p for p in run.workdir.rglob("*.py") if "health" in run.read(str(p))]
    ok = injected and bool(files)
    return ok, f"steering injected: {'yes' if injected else 'no'}; /health in {len(files)} file(s)"


def _subagent(run: StepRun) -> tuple[bool, str]:
    spawned, done = run.data("subagent_spawned"), run.data("subagent_completed")
    return bool(spawned and done), f"{len(spawned)} spawned, {len(done)} completed"


def _timeout(run: StepRun) -> tuple[bool, str]:
    outputs = run.outputs("shell")
    errors = run.data("error")
    if errors:
        return False, f"error: {errors[0].get('message')}"
    if any("timed out" in o for o in outputs):
        return True, "the command timed out; the agent went on"
    if outputs:  # a profile whose default timeout is longer than 30 s (Claude Code's 120 s)
        return True, "the command finished within the profile's longer default timeout"
    return False, "no shell call"


STEPS = (
    Step("file creation", "Create a file called hello.py that prints 'Hello World'", _created),
    Step(
        "read and edit",
        "Read hello.py and add a second print statement that says 'Goodbye'",
        _edited,
    ),
    Step("shell", "Run hello.py and show the output", _shell),
    Step("truncation", "Read big.txt", _truncation, prepare=_write_big_file),
    Step(
        "steering",
        "Create a Flask web application with multiple routes",
        _steering,
        steer="Actually, just create a single /health endpoint for now",
    ),
    Step(
        "subagent",
        "Spawn a subagent to write tests for hello.py, then review its output",
        _subagent,
    ),
    Step("timeout", "Run 'sleep 30' with the default timeout", _timeout),
)


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def mock_script() -> dict[str, Any]:
    """The scripted provider's answers to :data:`STEPS`, for every wire format.

    The scripted command in the timeout step sets a short timeout so the suite
    does not wait 10 s; a real model is left to the profile's default."""
    parent = [
        _call("write_file", file_path="hello.py", content="print('Hello World')\n"),
        {"text": "Created hello.py."},
        _call("read_file", file_path="hello.py"),
        _call(
            "write_file", file_path="hello.py", content="print('Hello World')\nprint('Goodbye')\n"
        ),
        {"text": "Added the Goodbye line."},
        _call("shell", command="python3 hello.py"),
        {"text": "It printed Hello World, then Goodbye."},
        _call("read_file", file_path="big.txt"),
        {"text": "big.txt is one long line of x."},
        _call(
            "write_file",
            file_path="app.py",
            content=(
                "from flask import Flask\n\napp = Flask(__name__)\n\n\n"
                "@app.route('/health')\ndef health():\n    return {'status': 'ok'}\n"
            ),
        ),
        {"text": "Only /health, as asked."},
        _call("spawn_agent", task="Write tests for hello.py in test_hello.py."),
        _call("wait", agent_ids=["a-1"], timeout_ms=60_000),
        {"text": "The subagent's tests look right."},
        _call("shell", command="sleep 30", timeout_ms=500),
        {"text": "sleep 30 timed out; nothing else to do."},
    ]
    child = [
        _call(
            "write_file",
            file_path="test_hello.py",
            content=(
                "import subprocess\n\n\ndef test_hello():\n"
                "    out = subprocess.run(['python3', 'hello.py'], capture_output=True,\n"
                "                         text=True)\n"
                "    assert 'Hello' in out.stdout\n"
            ),
        ),
        {"text": "Wrote test_hello.py."},
    ]
    return {
        "conversations": [
            {"match": "Write tests for hello.py", "turns": child},
            {"match": "Create a file called hello.py", "turns": parent},
        ]
    }
