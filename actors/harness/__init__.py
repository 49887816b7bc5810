"""What benchmark harnesses read and write: ATIF trajectories (Harbor,
Terminal-Bench) and SWE-bench predictions."""


def troupe_version() -> str:
    """The installed distribution's version, as trajectories and predictions name it."""
    from importlib import metadata

    try:
        return metadata.version("troupe-agents")
    except metadata.PackageNotFoundError:
        return "unknown"
