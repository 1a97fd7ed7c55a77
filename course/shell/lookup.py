"""Find the exercise or lesson a learner means from what they typed.

Accepted as they are: a name, a position as `jaxlings list` numbers it (1-based),
and a file name or path (`exercises/01_ecosystem/functional_ops.py`,
`02_arrays.md`). Anything else raises LookupError whose message suggests the
closest names: `functional-ops`, `Arrays`, `arrray`.
"""

from __future__ import annotations

import difflib
from pathlib import PurePath
from typing import Any

from course.i18n import N_, _


class NotFound(LookupError):
    """No such exercise or lesson; the message names close matches when there are any."""


def _key(text: str) -> str:
    return text.strip().lower().replace("-", "_").replace(" ", "_")


def _file_key(text: str) -> str:
    """`exercises/01_basics/scale.py`, `01_basics/scale.py` and `scale.py` all end in the same parts."""
    return PurePath(text.strip()).as_posix().lower()


def find_exercise(catalog: Any, text: str) -> Any:
    exercises = list(catalog.exercises)
    for ex in exercises:
        if ex.name == text:
            return ex
    if text.strip().isdigit():
        n = int(text)
        if 1 <= n <= len(exercises):
            return exercises[n - 1]
        raise NotFound(_("there is no exercise number {n}: exercises are numbered 1 to {total}, in the # column "
                         "of `jaxlings list`.").format(n=n, total=len(exercises)))
    wanted = _file_key(text)
    if wanted.endswith(".py"):
        by_file = [ex for ex in exercises if _ends_with(f"exercises/{ex.file}".lower(), wanted)]
        if len(by_file) == 1:
            return by_file[0]
    raise NotFound(_unknown(N_("exercise"), text, [ex.name for ex in exercises]))


def find_lesson(catalog: Any, text: str) -> Any:
    """A lesson by name, number or file; an exercise's name (or number-free match) gives its lesson."""
    lessons = list(catalog.lessons)
    for lesson in lessons:
        if lesson.name == text:
            return lesson
    if text.strip().isdigit():
        n = int(text)
        if 1 <= n <= len(lessons):
            return lessons[n - 1]
        raise NotFound(_("there is no lesson number {n}: lessons are numbered 1 to {total}, in the lesson column "
                         "of `jaxlings list`.").format(n=n, total=len(lessons)))
    wanted = _file_key(text)
    by_file = [lesson for lesson in lessons
               if _ends_with(f"lessons/{lesson.file}".lower(), wanted)
               or _ends_with(f"lessons/{lesson.file}".lower().removesuffix(".md"), wanted)]
    if len(by_file) == 1:
        return by_file[0]
    for ex in catalog.exercises:
        if ex.name == text:
            return catalog.lesson(ex.lesson)
    known = [lesson.name for lesson in lessons] + [ex.name for ex in catalog.exercises]
    raise NotFound(_unknown(N_("lesson or exercise"), text, known))


def _ends_with(path: str, wanted: str) -> bool:
    return path == wanted or path.endswith("/" + wanted)


def _unknown(kind: str, text: str, known: list[str]) -> str:
    keyed = {_key(name): name for name in known}
    exact = keyed.get(_key(text))
    if exact is not None:
        close = [exact]
    else:
        close = [keyed[k] for k in difflib.get_close_matches(_key(text), list(keyed), n=3, cutoff=0.6)]
    shown = text if len(text) <= 60 else text[:57] + "..."
    if close:
        return _("there is no {kind} named {name!r}. Did you mean: {close}?").format(
            kind=_(kind), name=shown, close=", ".join(close))
    return _("there is no {kind} named {name!r}. Run `jaxlings list` to see them.").format(kind=_(kind), name=shown)
