"""The authoring kit: `jaxlings dev new`, `new-exercise` and `check` (docs/authoring.md).

The API a course's checks import is `course.authoring`; this package holds the commands.
"""
