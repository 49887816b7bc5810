"""The ``troupe`` subcommands beyond ``mock-llm``: serve, run, attach, sessions,
demo and schema. :mod:`actors.cli` declares their arguments and hands over here."""
