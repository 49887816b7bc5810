"""The session actor: the agentic loop of coding-agent-loop-spec §2, its provider
profiles (§3) and system prompts (§6)."""
