"""Command-line tools of the agent framework: dbpmda, and the package writer of `pmda new`
(the pmda command itself lives with pmcd, whose configuration it edits)."""
