"""The Troupe server: WebSocket gateway, session registry, authentication."""
