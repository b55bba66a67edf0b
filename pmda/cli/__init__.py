"""Command-line tools of the agent framework: dbpmda (and, later, pmda install/remove/new)."""
