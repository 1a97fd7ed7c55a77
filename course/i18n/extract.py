"""Babel extractors for the course's content catalog (`content.po`): what the manifest and
the exercise files say to the learner, outside the lessons.

- `extract_manifest`: the course title, lesson titles and every hint in lessons/course.toml;
- `extract_docstring`: the task statement, the module docstring of each starter in exercises/.

Used by `make catalogs` (see babel-content.cfg); the msgid is the English text itself, so an
English edit shows up as a new, untranslated message that the catalog test catches.
"""

from __future__ import annotations

import ast
import tomllib
from collections.abc import Iterator
from typing import Any


def _line_of(text: str, needle: str) -> int:
    head = needle.split("\n", 1)[0][:40]
    for number, line in enumerate(text.splitlines(), 1):
        if head and head in line:
            return number
    return 1


def extract_manifest(fileobj: Any, keywords: Any, comment_tags: Any, options: Any) -> Iterator[tuple]:
    text = fileobj.read().decode("utf-8")
    data = tomllib.loads(text)
    if data.get("title"):
        yield _line_of(text, data["title"]), None, data["title"], ["the course title"]
    for lesson in data.get("lessons", []):
        yield _line_of(text, lesson["title"]), None, lesson["title"], [f"title of lesson {lesson['name']}"]
        for exercise in lesson.get("exercises", []):
            for k, hint in enumerate(exercise.get("hints", []), 1):
                yield _line_of(text, hint), None, hint, [f"hint {k} of exercise {exercise['name']}"]


def extract_docstring(fileobj: Any, keywords: Any, comment_tags: Any, options: Any) -> Iterator[tuple]:
    source = fileobj.read().decode("utf-8")
    doc = ast.get_docstring(ast.parse(source), clean=True)
    if doc:
        yield 1, None, doc, ["the task statement (module docstring of the starter file)"]
