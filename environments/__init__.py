"""Execution environments as actors: this machine, and remote hosts over SSH.

Imports ``protocol`` and ``actors.kernel`` only, never sessions or tools.
"""
