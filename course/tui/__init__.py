"""The Textual app: the only part of the course that imports Textual."""
