"""Tools that agents call: the engines behind the model-facing tool definitions."""
