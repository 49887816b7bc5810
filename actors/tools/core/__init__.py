"""The core tools (coding-agent-loop-spec §3.3, §3.4): files, edits, shell, search,
apply_patch. Every tool works through the session's execution environment actor,
so the same tool runs locally or on a remote host."""
