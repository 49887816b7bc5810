"""What benchmark harnesses read and write: ATIF trajectories (Harbor,
Terminal-Bench) and SWE-bench predictions."""


def troupe_version() -> str:
    """Troupe's version, as trajectories and predictions name it."""
    from actors import __version__

    return __version__
