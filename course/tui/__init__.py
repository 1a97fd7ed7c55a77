"""The Textual app: the only part of the course that imports Textual."""

from course.i18n import linebreak

linebreak.install(textual=True)  # Japanese lines break between characters, as they do in print

from course.tui import measure  # noqa: E402

measure.install()  # ... and Textual measures Japanese text by the same units
