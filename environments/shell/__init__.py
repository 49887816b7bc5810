"""POSIX shell scripts for environments that run commands on another machine or in
a container (SSH hosts, Docker containers, any :class:`~environments.command_env.
CommandEnvironment`): the command wrapper and its markers, the group kill, grep and
find, and the link-free path checks for hosts without python3."""
