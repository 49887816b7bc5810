"""The editor host: Troupe as an Agent Client Protocol agent over stdio."""
