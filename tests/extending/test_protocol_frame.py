"""docs/extending.md, "Add a protocol frame", followed on copies of the project: the
page's toy event goes into ``protocol/events.py`` and into ``EventData``, the event
reference of ``docs/protocol.md`` is regenerated with ``python -m
protocol.event_docs``, and a real server's session emits the event to a WebSocket
client (frame_program.py). The page's toy request goes into
``protocol/wire_requests.py`` and ``Request``, ``protocol/wire.py`` and the
server's ``actors/server/dispatch.py``, and a real server answers it
(request_program.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.extending.patching import (
    PAGE,
    REPO,
    copy_packages,
    edit,
    first_case,
    insert_after,
    run_program,
    shown_into,
    without_imports,
)

UNION = "EventData = (\n    "
"""Where the union of every kind starts in protocol/events.py; the recipe adds the
new kind to it."""


def follow_the_recipe(root: Path) -> None:
    copy_packages(root, "protocol")
    events = root / "protocol" / "events.py"
    block = without_imports(shown_into("protocol/events.py"))
    edit(events, UNION, f"{block}\n\n\n{UNION}NoteEvent\n    | ")
    (root / "docs").mkdir()
    shutil.copy(REPO / "docs" / "protocol.md", root / "docs" / "protocol.md")


def test_a_new_event_is_its_struct_and_a_line_of_the_union(tmp_path: Path) -> None:
    follow_the_recipe(tmp_path)
    page = tmp_path / "docs" / "protocol.md"
    generated = run_program(tmp_path, "-m", "protocol.event_docs", str(page))
    assert "updated the event reference" in generated.stdout
    rows = [line for line in page.read_text().splitlines() if line.startswith("| `note`")]
    assert rows == ["| `note` | `text`: string | The session wrote a note for its reader. |"]
    ran = run_program(tmp_path, "-m", "tests.extending.frame_program", str(tmp_path))
    assert "refused: Expected `str`, got `int` - at `$.text`" in ran.stdout
    assert "live and replayed" in ran.stdout
    schema = json.loads(run_program(tmp_path, "-m", "actors.cli", "schema").stdout)
    assert schema["$defs"]["NoteEvent"]["properties"] == {"text": {"type": "string"}}


def test_without_the_recipe_there_is_no_such_event(tmp_path: Path) -> None:
    """The program fails on the project as it is: the event comes from the recipe."""
    copy_packages(tmp_path, "protocol")
    try:
        run_program(tmp_path, "-m", "tests.extending.frame_program", str(tmp_path))
    except AssertionError as error:
        assert "KeyError: 'note'" in str(error)
    else:
        raise AssertionError("the program ran without the toy event")


REQUESTS = "Request = (\n    "
IMPORTED = "from protocol.wire_requests import (\n"
DISPATCH_IMPORTS = "from protocol.wire import (\n"
ANSWER = "case Ping(): return Ok(request.id)"
"""The line the page gives for the server's answer."""


def follow_the_request_recipe(root: Path) -> None:
    copy_packages(root, "protocol", "actors")
    requests = root / "protocol" / "wire_requests.py"
    block = without_imports(shown_into("protocol/wire_requests.py"))
    edit(requests, REQUESTS, f"{block}\n\n\n{REQUESTS}Ping\n    | ")
    edit(root / "protocol" / "wire.py", IMPORTED, f"{IMPORTED}    Ping,\n")
    dispatch = root / "actors" / "server" / "dispatch.py"
    edit(dispatch, DISPATCH_IMPORTS, f"{DISPATCH_IMPORTS}    Ping,\n")
    line, indent = first_case(dispatch, "_answer")
    case, _, answer = ANSWER.partition(": ")
    insert_after(dispatch, line, f"{indent}{case}:\n{indent}    {answer}")


def test_a_new_request_is_its_struct_a_line_of_the_union_and_a_case(tmp_path: Path) -> None:
    assert f"`{ANSWER}`" in " ".join(PAGE.read_text().split())
    follow_the_request_recipe(tmp_path)
    ran = run_program(tmp_path, "-m", "tests.extending.request_program", str(tmp_path))
    assert ran.stdout.splitlines() == ["json Ok 1", "msgpack Ok 1"], ran.stdout
    schema = json.loads(run_program(tmp_path, "-m", "actors.cli", "schema").stdout)
    assert {"$ref": "#/$defs/Ping"} in schema["properties"]["client_frame"]["anyOf"]
