"""Turn any exception from the core into one sentence a learner can act on."""

from __future__ import annotations


def describe(error: BaseException) -> str:
    if isinstance(error, ModuleNotFoundError) and (error.name or "").startswith("course"):
        return (
            f"This part of the course is not installed ({error.name}). "
            "Run `make course` again, or `jaxlings doctor` to see what is missing."
        )
    if isinstance(error, FileNotFoundError):
        return f"A file the course needs is missing: {error.filename or error}"
    if isinstance(error, PermissionError):
        return f"No permission to read or write {error.filename or 'a course file'}."
    text = str(error).strip()
    name = type(error).__name__
    return f"{name}: {text}" if text else name
