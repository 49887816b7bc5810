"""Issue 35's skills acceptance: a skill folder laid out as the anchors document
(SKILL.md with ``name`` and ``description`` front matter, a script and a reference
beside it) is listed by ``troupe config``, named in the system prompt while its
body stays out of the requests until the model calls ``skill``, and its script runs
through the shell tool under the sandbox. Custom slash commands from
``.claude/commands`` expand in a real ``troupe run``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.cli.conftest import Home, mock_llm, request_bodies, text_of
from tests.session.scripts import call, tool_names, turns

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed")

SKILL = """\
---
name: pdf-processing
description: Extract the text of PDF files and summarise their pages. Use when the user
  mentions PDFs, reports or document extraction.
---

# PDF processing

BODY-MARKER-7f3a: these instructions reach the model only after it loads the skill.

## Quick start

Extract the text with the bundled script, from the project's root:

    python3 .claude/skills/pdf-processing/scripts/extract_text.py FILE

For the page format see [reference.md](reference.md).
"""

EXTRACT = """\
import pathlib, sys
text = pathlib.Path(sys.argv[1]).read_text()
try:  # outside the workspace: the sandbox keeps it read-only
    (pathlib.Path.home() / "skill-escaped.txt").write_text("out")
    confined = False
except OSError:
    confined = True
print(f"extracted {len(text.split())} words; confined={confined}")
"""


def plant_skill(work: Path) -> Path:
    folder = work / ".claude" / "skills" / "pdf-processing"
    (folder / "scripts").mkdir(parents=True)
    (folder / "SKILL.md").write_text(SKILL)
    (folder / "reference.md").write_text("Pages are separated by form feeds.\n")
    (folder / "scripts" / "extract_text.py").write_text(EXTRACT)
    (work / "report.pdf").write_text("quarterly numbers went up again\n")
    return folder


@needs_bwrap
async def test_a_skill_is_listed_loaded_on_use_and_its_script_sandboxed(home: Home) -> None:
    folder = plant_skill(home.work)
    shown = await home.troupe("config", "--json")
    assert shown.returncode == 0, shown.stderr
    skills = json.loads(shown.stdout)["skills"]
    assert [(s["name"], s["scope"]) for s in skills] == [("pdf-processing", "project")]
    assert "pdf-processing" in (await home.troupe("config")).stdout.decode()

    extract = f"python3 {folder.relative_to(home.work)}/scripts/extract_text.py report.pdf"
    load = {"name": "skill", "arguments": {"name": "pdf-processing"}}
    script = turns([load], [call("shell", command=extract)], "Summarised.")
    async with mock_llm(script) as mock:
        done = await home.troupe("run", "--base-url", mock.base_url, "summarise report.pdf")
        assert done.returncode == 0, done.stderr
        bodies = request_bodies(mock)
    assert len(bodies) == 3
    first = text_of(bodies[0])
    assert "skill" in tool_names(bodies[0])
    assert "pdf-processing: Extract the text of PDF files" in first
    assert "BODY-MARKER-7f3a" not in first, "the body was sent before the skill was used"
    loaded = text_of(bodies[1])
    assert "BODY-MARKER-7f3a" in loaded and f"Skill directory: {folder}" in loaded
    assert "reference.md" in loaded and "scripts/" in loaded
    assert "extracted 5 words; confined=True" in text_of(bodies[2])
    assert not (home.root / "home" / "skill-escaped.txt").exists()


async def test_users_skills_are_found_and_the_projects_win_on_a_name(home: Home) -> None:
    plant_skill(home.work)
    mine = home.root / "home" / ".codex" / "skills"
    for name, description in (("pdf-processing", "the user's older copy"),
                              ("changelog", "Write changelog entries.")):  # fmt: skip
        (mine / name).mkdir(parents=True)
        (mine / name / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: {description}\n---\nbody\n"
        )
    (mine / "broken").mkdir()
    (mine / "broken" / "SKILL.md").write_text("---\nname: broken\n---\nno description\n")
    shown = json.loads((await home.troupe("config", "--json")).stdout)["skills"]
    assert [(s["name"], s["scope"]) for s in shown] == [
        ("pdf-processing", "project"), ("changelog", "user"),
    ]  # fmt: skip


async def test_a_custom_slash_command_expands_in_a_run(home: Home) -> None:
    commands = home.work / ".claude" / "commands"
    commands.mkdir(parents=True)
    (commands / "review.md").write_text(
        "---\ndescription: Review a file\nargument-hint: FILE\n---\n"
        "Review $ARGUMENTS for bugs; start with $1.\n"
    )
    listed = json.loads((await home.troupe("config", "--json")).stdout)["commands"]
    assert [(c["name"], c["description"]) for c in listed] == [("review", "Review a file")]
    async with mock_llm({"turns": [{"text": "Looks fine."}]}) as mock:
        done = await home.troupe("run", "--base-url", mock.base_url, "/review app.py util.py")
        assert done.returncode == 0, done.stderr
        sent = text_of(request_bodies(mock)[0])
    assert "Review app.py util.py for bugs; start with app.py." in sent
    assert "/review" not in sent and "argument-hint" not in sent
