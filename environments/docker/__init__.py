"""Docker containers as execution environments, through the Docker Engine API.

``api`` speaks to the daemon (httpx over its Unix socket or TCP); ``command`` runs
one command in its own process group and kills it by group; ``labels`` marks what
Troupe creates and sweeps a crash's orphans; ``environment`` is the actor.
"""
