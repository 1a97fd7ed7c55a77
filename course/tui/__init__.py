"""The Textual app: the only part of the course that imports Textual."""

from course import linebreak

linebreak.install(textual=True)  # Japanese lines break between characters, as they do in print
