"""Command-line tools of the agent framework: dbpmda, and `pmda new`'s package writer (the pmda command itself lives with pmcd, whose configuration it edits)."""
