"""SKILL.md and command files: pure functions, no processes."""

from __future__ import annotations

import pytest

from actors.skills.catalog import Skill, SkillCatalog, parse_skill
from actors.skills.commands import parse_command
from actors.skills.front_matter import FrontMatterError, split_front_matter
from actors.skills.index import skills_index


def test_front_matter_and_skill_fields() -> None:
    skill = parse_skill("---\nname: a-b\ndescription: >\n  Does\n  things.\n---\nBody\n",
                        "/x/a-b", "project", False)  # fmt: skip
    assert (skill.name, skill.description, skill.path) == ("a-b", "Does things.", "/x/a-b/SKILL.md")
    with pytest.raises(ValueError, match="description"):
        parse_skill("---\nname: a\n---\nBody", "/x/a", "user", True)
    with pytest.raises(ValueError, match="not a skill name"):
        parse_skill("---\nname: ../../etc\ndescription: d\n---\n", "/x/a", "user", True)
    with pytest.raises(FrontMatterError):
        split_front_matter("---\nname: [unclosed\n---\n")
    assert split_front_matter("no front matter") == ({}, "no front matter")


def test_the_index_keeps_to_its_budget_and_never_carries_a_body() -> None:
    skills = tuple(Skill(f"skill-{n}", "d" * 500, f"/s/{n}", "user", True) for n in range(60))
    index = skills_index(SkillCatalog(skills), budget=4000)
    assert len(index) <= 4000
    assert "skill-0: " + "d" * 297 + "..." in index
    assert "skill-59" in index or "more (the skill tool lists every name)" in index
    assert skills_index(SkillCatalog()) == ""


def test_command_arguments() -> None:
    review = parse_command("---\ndescription: Review\n---\nReview $ARGUMENTS; first $1, then $2.",
                           "/p/review.md", "project")  # fmt: skip
    assert review.expand('"a b.py" c.py') == 'Review "a b.py" c.py; first a b.py, then c.py.'
    plain = parse_command("# Explain the code\nExplain it simply.", "/p/explain.md", "user")
    assert plain.description == "Explain the code"
    assert plain.expand("main.py").endswith("ARGUMENTS: main.py")
    assert plain.expand("") == "# Explain the code\nExplain it simply."
