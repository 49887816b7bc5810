"""The session's own reads of project files (AGENTS.md, skills, commands, hook and
tool settings) stay inside the project on every kind of environment: a symlink out
of the project, to a file or through a directory, is refused with a typed error and
its content is never returned; links that stay inside still read."""

from __future__ import annotations

import os

import pytest

from environments.errors import FileNotFound
from environments.project_files import OutsideProject, read_project_file
from tests.environments.conftest import EnvUnderTest


async def test_a_link_out_of_the_project_is_refused_and_one_inside_reads(
    env: EnvUnderTest,
) -> None:
    root = env.workdir
    (root / "docs").mkdir()
    (root / "docs" / "rules.md").write_text("keep tests green\n")
    os.symlink("docs/rules.md", root / "AGENTS.md")  # inside: fine
    os.symlink("/etc/passwd", root / "CLAUDE.md")  # a file outside
    os.symlink("/etc", root / "config")  # a directory outside
    os.symlink("../" * 12 + "etc/passwd", root / "GEMINI.md")  # up and out

    inside = await read_project_file(env.ref, str(root / "AGENTS.md"), str(root))
    assert inside.text == "keep tests green\n"
    for name in ("CLAUDE.md", "config/passwd", "GEMINI.md"):
        with pytest.raises(OutsideProject, match="outside the project") as refused:
            await read_project_file(env.ref, str(root / name), str(root))
        assert "root:" not in str(refused.value), name
    with pytest.raises(FileNotFound):
        await read_project_file(env.ref, str(root / "absent.md"), str(root))
