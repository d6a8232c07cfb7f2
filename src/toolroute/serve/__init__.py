"""Serving the router, the tools and the agent to other programs (MCP; HTTP)."""
