"""The web page: plain HTTP for its assets and login, on the WebSocket's own port."""
