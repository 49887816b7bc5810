"""docs/skills.md's examples, written as the page shows them and run: the skill is
listed, named in the first request without its instructions, loaded by ``skill``,
and its script runs through the shell tool; the ``/review`` command expands to the
sentence the page quotes."""

from __future__ import annotations

import json

from tests.cli.conftest import REPO, Home, mock_llm, request_bodies, text_of
from tests.docs_files import plant
from tests.session.scripts import call, turns

PAGE = REPO / "docs" / "skills.md"


async def test_the_skill_example(home: Home) -> None:
    assert len(plant(PAGE, home.work)) == 4
    (home.work / "README.md").write_text("one two three\nfour\n")
    listed = (await home.troupe("config")).stdout.decode()
    assert "skill word-count" in listed and "Count the words" in listed
    script = turns(
        [{"name": "skill", "arguments": {"name": "word-count"}}],
        [call("shell", command="python3 .claude/skills/word-count/scripts/count.py README.md")],
        "README.md has 4 words.",
    )
    async with mock_llm(script) as mock:
        done = await home.troupe("run", "--base-url", mock.base_url,
                                 "How many words are in README.md?")  # fmt: skip
        assert done.returncode == 0, done.stderr
        bodies = request_bodies(mock)
    assert "word-count: Count the words and lines of text files." in text_of(bodies[0])
    assert "bundled script" not in text_of(bodies[0])
    assert "bundled script" in text_of(bodies[1]) and "reference.md" in text_of(bodies[1])
    assert "4 2 README.md" in text_of(bodies[2])


async def test_the_command_example(home: Home) -> None:
    plant(PAGE, home.work)
    commands = json.loads((await home.troupe("config", "--json")).stdout)["commands"]
    assert [c["description"] for c in commands] == ["Review a file for bugs"]
    async with mock_llm({"turns": [{"text": "No bugs."}]}) as mock:
        done = await home.troupe("run", "--base-url", mock.base_url,
                                 "/review app.py error-handling")  # fmt: skip
        assert done.returncode == 0, done.stderr
        sent = text_of(request_bodies(mock)[0])
    expected = "Review app.py for bugs, focusing on error-handling. "
    expected += "List each problem with its line number."
    assert expected in sent
    assert expected in " ".join(PAGE.read_text().replace("`", "").split())
