"""What the plain shell shows: the CLI's commands, `watch`, lookups by name or number, and
terminal output. It stands above the catalog, progress and engine, and nothing below imports it."""
