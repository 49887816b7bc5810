"""Who may reach the server's port, one floor below both the WebSocket server and
the web page: the bearer token and Origin rules (:mod:`actors.access.auth`) and
which local process is at the other end of a connection
(:mod:`actors.access.peers`). The server and the page both sit on this; neither
imports the other's internals for it."""
