"""The engine's words in the learner's language, from the trusted parent.

The sandboxed child sees only `course/__init__.py` and `course/engine/`, not
`course.i18n`: it is imported here at each call, never at the top, and where
it cannot be (the child, which shows nothing to the learner) English stays.
"""

from __future__ import annotations


def _(message: str) -> str:
    """`message` in the language in use (English where `course.i18n` is out of reach)."""
    try:
        from course.i18n import _ as translate
    except ImportError:
        return message
    return translate(message)


def N_(message: str) -> str:
    """Mark `message` for the catalog; `_()` translates it where it is shown."""
    return message
