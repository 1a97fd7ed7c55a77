"""`jaxlings dev new` and `jaxlings dev new-exercise`: a course, or one more exercise, from templates.

`new_course` writes a complete course that `jaxlings dev check` accepts as it is: a manifest,
one lesson, one exercise with its starter, solution and check, an alternative solution and
three attacks. `new_exercise` adds an exercise to a course: it appends the exercise to the
manifest (only after checking that the new manifest reads back with the exercise where it was
asked for) and writes its files, each marked `TODO (author)` where the author fills in.

Neither ever overwrites a file: an existing course folder, exercise or file is refused.
"""

from __future__ import annotations

import keyword
import os
import string
import tomllib
from pathlib import Path

from course.catalog import MANIFEST, load_catalog

TEMPLATES = Path(__file__).resolve().parent
SUFFIX = ".tmpl"
# Files whose names a package cannot carry as they are (a dot-file).
RENAMED = {"gitignore": ".gitignore"}


class ScaffoldError(Exception):
    """Refused: the message says why; nothing was written."""


def toml_string(text: str) -> str:
    """`text` as a TOML basic string."""
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _render(path: Path, values: dict[str, str]) -> str:
    return string.Template(path.read_text(encoding="utf-8")).safe_substitute(values)


def _write_new(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "x", encoding="utf-8") as f:  # never over an existing file
        f.write(text)


def new_course(dest: Path, title: str = "A jaxlings course") -> list[Path]:
    """Write the template course into `dest` (absent or empty). Returns the files written."""
    dest = Path(dest)
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise ScaffoldError(f"{dest} already exists and is not an empty folder: choose a new one")
    if not title.strip():
        raise ScaffoldError("the course needs a title")
    values = {"title": toml_string(title), "plain_title": title}
    written = []
    source = TEMPLATES / "template"
    for template in sorted(source.rglob("*" + SUFFIX)):
        relative = template.relative_to(source).with_suffix("")  # drop .tmpl
        relative = relative.with_name(RENAMED.get(relative.name, relative.name))
        target = dest / relative
        _write_new(target, _render(template, values))
        written.append(target)
    return written


def _check_name(name: str) -> None:
    if not name.isidentifier() or keyword.iskeyword(name) or not name.isascii() or name.startswith("_"):
        raise ScaffoldError(f"{name!r} is not a usable exercise name: use a Python identifier such as "
                            "'layer_norm' (it names the function, the files and the check)")


def new_exercise(root: Path, name: str, lesson: str | None = None) -> list[Path]:
    """Add exercise `name` to the course at `root`: to `lesson` (a new lesson when the course has none
    of that name), or to the last lesson. Returns the files written, the manifest first."""
    root = Path(root).resolve()
    _check_name(name)
    manifest = root / "lessons" / MANIFEST
    catalog = load_catalog(root)  # raises ManifestError with every problem
    if name in catalog:
        raise ScaffoldError(f"the course already has an exercise named {name!r}")
    if lesson is not None and not lesson.strip():
        raise ScaffoldError("the lesson's name is empty")
    by_name = {le.name: le for le in catalog.lessons}
    existing = by_name.get(lesson) if lesson else (catalog.lessons[-1] if catalog.lessons else None)
    new_lesson = existing is None
    if new_lesson:
        lesson = lesson or name
        lesson_file = f"{len(catalog.lessons) + 1:02d}_{lesson}.md"
    else:
        lesson, lesson_file = existing.name, existing.file
    folder = Path(lesson_file).stem
    file = f"{folder}/{name}.py"
    check = f"test_{name}"
    values = {"name": name, "title": lesson}
    files = {
        root / "exercises" / file: TEMPLATES / "exercise" / "starter.py.tmpl",
        root / "solutions" / file: TEMPLATES / "exercise" / "solution.py.tmpl",
        root / "checks" / f"{check}.py": TEMPLATES / "exercise" / "check.py.tmpl",
        root / "attacks" / name / "near_mistake.py": TEMPLATES / "exercise" / "attack.py.tmpl",
    }
    if new_lesson:
        files[root / "lessons" / lesson_file] = TEMPLATES / "exercise" / "lesson.md.tmpl"
    taken = [p for p in files if p.exists()]
    if taken:
        raise ScaffoldError("these files exist already: " + ", ".join(str(p.relative_to(root)) for p in taken))

    block = []
    if new_lesson:
        block += ["", "[[lessons]]", f"name = {toml_string(lesson)}", f"title = {toml_string(lesson)}",
                  f"file = {toml_string(lesson_file)}"]
    block += ["", "  [[lessons.exercises]]", f"  name = {toml_string(name)}", f"  file = {toml_string(file)}",
              f"  check = {toml_string(check)}", "  hints = [",
              '    "TODO (author): a nudge toward the idea.",',
              '    "TODO (author): a stronger hint, close to the answer.",', "  ]", ""]
    text = manifest.read_text(encoding="utf-8")
    updated = text + ("" if text.endswith("\n") else "\n") + "\n".join(block)
    _placed_where_asked(updated, name, lesson, manifest)

    tmp = manifest.with_name(f".{manifest.name}.{os.getpid()}.tmp")
    tmp.write_text(updated, encoding="utf-8")
    written = [manifest]
    try:
        for target, template in files.items():
            _write_new(target, _render(template, values))
            written.append(target)
    except BaseException:
        for path in written[1:]:
            path.unlink(missing_ok=True)
        tmp.unlink(missing_ok=True)
        raise
    os.replace(tmp, manifest)
    return written


def _placed_where_asked(text: str, name: str, lesson: str, manifest: Path) -> None:
    """The appended tables land in the manifest's last lesson only when its lessons are written as
    `[[lessons]]` tables: read the result back before writing anything."""
    try:
        data = tomllib.loads(text)
        lessons = data.get("lessons", [])
        placed = [le.get("name") for le in lessons for ex in le.get("exercises", []) if ex.get("name") == name]
    except (tomllib.TOMLDecodeError, AttributeError, TypeError):
        placed = []
    if placed != [lesson]:
        raise ScaffoldError(f"cannot add the exercise to {manifest} automatically (its lessons are not written as "
                            f"[[lessons]] tables, or lesson {lesson!r} is not the last one): add it by hand under "
                            f"lesson {lesson!r}; see docs/authoring.md")
