"""Remote hosts over SSH (asyncssh), as execution environments.

asyncssh runs on one asyncio loop in a dedicated thread, owned by the
:class:`~environments.ssh.bridge.SSHBridge` actor; every SSH host is a child actor
of the bridge. Only ``bridge``, ``connect``, ``pool``, ``killer``, ``command``,
``sftp`` and ``leftovers`` touch asyncio.
"""
