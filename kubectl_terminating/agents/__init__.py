"""Agents: the diagnosis as Model Context Protocol tools (`kubectl terminating mcp`)."""
