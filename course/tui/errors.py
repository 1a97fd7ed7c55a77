"""Turn any exception from the core into one sentence a learner can act on."""

from __future__ import annotations

from course.i18n import _


def describe(error: BaseException) -> str:
    if isinstance(error, ModuleNotFoundError) and (error.name or "").startswith("course"):
        return _(
            "This part of the course is not installed ({module}). "
            "Run `make course` again, or `jaxlings doctor` to see what is missing."
        ).format(module=error.name)
    if isinstance(error, FileNotFoundError):
        return _("A file the course needs is missing: {file}").format(file=error.filename or error)
    if isinstance(error, PermissionError):
        return _("No permission to read or write {file}.").format(file=error.filename or _("a course file"))
    text = str(error).strip()
    name = type(error).__name__
    return f"{name}: {text}" if text else name
