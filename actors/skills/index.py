"""The skills' short list in the system prompt (progressive disclosure): each
skill's name and description, within :data:`INDEX_BUDGET` characters; the
instructions themselves stay out until the model loads one with the ``skill`` tool.
Past the budget the rest are named only, then counted."""

from __future__ import annotations

from actors.skills.catalog import SkillCatalog

INDEX_BUDGET = 4000
DESCRIPTION_SHOWN = 300
HEADER = (
    "Skills: instructions for particular tasks, with scripts and references beside "
    "them. When a task matches a skill's description, call the `skill` tool with its "
    "name first and follow what it says."
)


def skills_index(catalog: SkillCatalog, budget: int = INDEX_BUDGET) -> str:
    """The system prompt's block naming the skills ("" when there are none)."""
    if not catalog.skills:
        return ""
    lines = [HEADER]
    used = len(HEADER)
    left = list(catalog.skills)
    while left:
        skill = left[0]
        description = skill.description
        if len(description) > DESCRIPTION_SHOWN:
            description = description[: DESCRIPTION_SHOWN - 3] + "..."
        line = f"- {skill.name}: {description}"
        if used + len(line) + 1 > budget:
            break
        lines.append(line)
        used += len(line) + 1
        left.pop(0)
    named: list[str] = []
    while left and used + len(left[0].name) + 4 <= budget - 60:
        named.append(left.pop(0).name)
        used += len(named[-1]) + 2
    if named:
        lines.append("- also: " + ", ".join(named))
    if left:
        lines.append(f"- and {len(left)} more (the skill tool lists every name)")
    return "\n".join(lines)
