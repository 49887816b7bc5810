"""Skills in the open SKILL.md format (Claude Code, Codex) and custom slash
commands as Markdown prompt files.

:mod:`.catalog` finds and reads skills, :mod:`.index` writes the short list the
system prompt carries, :mod:`.tool` is the one tool that loads a skill's body, and
:mod:`.commands` finds and expands custom slash commands.
"""

from actors.skills.catalog import Skill, SkillCatalog
from actors.skills.commands import CommandCatalog, PromptCommand

__all__ = ["CommandCatalog", "PromptCommand", "Skill", "SkillCatalog"]
