"""The ``--store`` setting (``store =`` in a config file): which backend holds the
sessions. Its own small module: ``troupe config`` shows it, ``troupe serve``
checks it, and neither should import a database driver to do so."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

POSTGRES_SCHEMES = ("postgresql://", "postgres://")


def is_postgres(store: str) -> bool:
    return store.startswith(POSTGRES_SCHEMES)


def check_store_setting(store: str) -> str:
    """The setting checked: empty or ``sqlite`` (``troupe.db`` in the data
    directory, the default) or a ``postgresql://`` URL. Raises :class:`ValueError`
    with the reason for anything else."""
    setting = store.strip()
    if setting in ("", "sqlite") or is_postgres(setting):
        return setting
    raise ValueError(
        f"unknown store {redact(setting)!r}: give 'sqlite' (the default, troupe.db in the "
        "data directory) or a postgresql:// URL"
    )


def redact(store: str) -> str:
    """The setting as people may see it: a URL's password (in its user part or
    its query) replaced by ``***``, whatever its scheme."""
    if "://" not in store:
        return store if len(store) < 60 else store[:57] + "..."
    try:
        parts = urlsplit(store)
        netloc = parts.netloc
        if "@" in netloc:
            user, host = netloc.rsplit("@", 1)
            if ":" in user:
                user = user.split(":", 1)[0] + ":***"
            netloc = f"{user}@{host}"
        query = [(k, "***" if k == "password" else v) for k, v in parse_qsl(parts.query)]
        return urlunsplit(parts._replace(netloc=netloc, query=urlencode(query, safe="/*")))
    except ValueError:
        return "(a URL that cannot be parsed)"
