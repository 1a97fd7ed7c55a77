"""The course catalog: lessons and exercises from `lessons/course.toml`, in course order.

Everything is keyed by name. `load_catalog` reads and checks the manifest's
structure (fields, types, unique names, format version) and raises
`ManifestError` listing every problem. `validate` adds the checks that need the
files (lesson texts, starters, solutions, check modules, at least two hints);
`jaxlings doctor` prints its list.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from course import paths
from course.i18n import _

FORMAT_VERSION = 1
MANIFEST = "course.toml"

_TOP_FIELDS = {"format_version": int, "title": str, "language": str, "lessons": list}
_LESSON_FIELDS = {"name": str, "title": str, "file": str, "exercises": list}
_EXERCISE_FIELDS = {"name": str, "file": str, "check": str, "hints": list, "points": (int, float), "timeout": (int, float)}
_EXERCISE_REQUIRED = ("name", "file", "check", "hints")
_LESSON_REQUIRED = ("name", "title", "file")
MIN_HINTS = 2


class ManifestError(Exception):
    """The manifest is broken; the message lists every problem found."""

    def __init__(self, problems: list[str], path: Path | None = None) -> None:
        self.problems = list(problems)
        self.path = path
        where = _(" in {path}").format(path=path) if path else ""
        super().__init__(_("{n} problem(s){where}:").format(n=len(problems), where=where) + "\n"
                         + "\n".join(f"  - {p}" for p in problems))


@dataclass(frozen=True)
class Exercise:
    name: str
    lesson: str
    file: str  # relative to exercises/ and solutions/
    check: str  # module name in course/checks/
    hints: tuple[str, ...]
    points: float = 1.0
    timeout: float | None = None
    root: Path | None = field(default=None, compare=False, repr=False)
    workspace: Path | None = field(default=None, compare=False, repr=False)

    def exercise_path(self) -> Path:
        """The learner's copy in the workspace's exercises/."""
        return (self.workspace or default_workspace(self.root)) / "exercises" / self.file

    def solution_path(self) -> Path:
        return (self.root or paths.course_root()) / "solutions" / self.file

    def check_path(self) -> Path:
        return checks_dir(self.root) / f"{self.check}.py"


@dataclass(frozen=True)
class Lesson:
    name: str
    title: str
    file: str  # relative to lessons/
    exercises: tuple[Exercise, ...]
    root: Path | None = field(default=None, compare=False, repr=False)

    def lesson_path(self, lang: str | None = None) -> Path:
        """The lesson's Markdown in `lang` (default: the language in use); English when there
        is no edition in that language."""
        from course import i18n

        lessons = (self.root or paths.course_root()) / "lessons"
        lang = lang or i18n.language()
        if lang != i18n.DEFAULT and (lessons / lang / self.file).is_file():
            return lessons / lang / self.file
        return lessons / self.file


def default_workspace(root: Path | None) -> Path:
    """JAXLINGS_WORKSPACE if set, else the course root the catalog came from."""
    if root is None or os.environ.get("JAXLINGS_WORKSPACE"):
        return paths.workspace()
    return root


def checks_dir(root: Path | None = None) -> Path:
    """Check modules live in the package; a course root may carry its own `checks/`."""
    if root is not None and (root / "checks").is_dir():
        return root / "checks"
    return paths.CHECKS_DIR


class Catalog:
    def __init__(self, title: str, lessons: tuple[Lesson, ...], root: Path, problems: list[str] | None = None,
                 language: str | None = None):
        self.title = title
        self.language = language  # the course's default language (manifest `language`), or None
        self.lessons = lessons
        self.root = root
        self.problems = list(problems or [])
        self.exercises: tuple[Exercise, ...] = tuple(e for lesson in lessons for e in lesson.exercises)
        self._by_name = {e.name: e for e in self.exercises}
        self._lessons = {lesson.name: lesson for lesson in lessons}

    def exercise(self, name: str) -> Exercise:
        try:
            return self._by_name[name]
        except KeyError:
            raise KeyError(_unknown("exercise", name, list(self._by_name))) from None

    def lesson(self, name: str) -> Lesson:
        try:
            return self._lessons[name]
        except KeyError:
            raise KeyError(_unknown("lesson", name, list(self._lessons))) from None

    def lesson_of(self, exercise_name: str) -> Lesson:
        return self.lesson(self.exercise(exercise_name).lesson)

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def __repr__(self) -> str:
        return f"Catalog({self.title!r}, {len(self.lessons)} lessons, {len(self.exercises)} exercises)"


def _unknown(kind: str, name: str, known: list[str]) -> str:
    import difflib

    close = difflib.get_close_matches(name, known, n=3)
    if close:
        return _("there is no {kind} named {name!r}. Did you mean: {close}?").format(
            kind=_(kind), name=name, close=", ".join(close))
    return _("there is no {kind} named {name!r}. Run `jaxlings list` to see them.").format(kind=_(kind), name=name)


def manifest_path(root: Path | None = None) -> Path:
    return (root or paths.course_root()) / "lessons" / MANIFEST


def load_catalog(root: Path | None = None, *, strict: bool = True) -> Catalog:
    """Read the manifest. strict: raise ManifestError on any structural problem;
    otherwise keep what can be read and list the problems in `catalog.problems`."""
    root = Path(root).resolve() if root is not None else paths.course_root()
    path = manifest_path(root)
    problems: list[str] = []
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        problems.append(_("the manifest {path} does not exist").format(path=path))
        data = None
    except (OSError, UnicodeDecodeError) as e:
        problems.append(_("the manifest {path} cannot be read: {error}").format(path=path, error=e))
        data = None
    except tomllib.TOMLDecodeError as e:
        problems.append(_("the manifest is not valid TOML: {error}").format(error=e))
        data = None
    catalog = _build(data, root, problems) if data is not None else Catalog("", (), root, problems)
    if strict and problems:
        raise ManifestError(problems, path)
    return catalog


def _check_fields(where: str, table: dict, spec: dict, required: tuple[str, ...], problems: list[str]) -> bool:
    ok = True
    for key in table:
        if key not in spec:
            problems.append(f"{where}: unknown field {key!r} (known: {', '.join(spec)})")
            ok = False
    for key in required:
        if key not in table:
            problems.append(f"{where}: missing field {key!r}")
            ok = False
    for key, kind in spec.items():
        if key in table and (not isinstance(table[key], kind) or isinstance(table[key], bool)):
            problems.append(f"{where}: field {key!r} has the wrong type ({type(table[key]).__name__})")
            ok = False
    return ok


def _relative_file(where: str, value: str, problems: list[str]) -> bool:
    p = PurePosixPath(value)
    if p.is_absolute() or ".." in p.parts or not value.strip():
        problems.append(f"{where}: file {value!r} must be a relative path inside the course")
        return False
    return True


def _build(data: dict, root: Path, problems: list[str]) -> Catalog:
    _check_fields("manifest", data, _TOP_FIELDS, ("format_version", "title", "lessons"), problems)
    version = data.get("format_version")
    if isinstance(version, int) and version != FORMAT_VERSION:
        problems.append(
            f"manifest: format_version {version} is not supported (this jaxlings reads version {FORMAT_VERSION})"
        )
    lessons: list[Lesson] = []
    seen_lessons: set[str] = set()
    seen_exercises: dict[str, str] = {}
    seen_files: dict[str, str] = {}
    raw_lessons = data.get("lessons") if isinstance(data.get("lessons"), list) else []
    for i, raw in enumerate(raw_lessons):
        where = f"lesson #{i + 1}"
        if not isinstance(raw, dict):
            problems.append(f"{where}: not a table")
            continue
        if isinstance(raw.get("name"), str):
            where = f"lesson {raw['name']!r}"
        if not _check_fields(where, raw, _LESSON_FIELDS, _LESSON_REQUIRED, problems):
            continue
        _relative_file(where, raw["file"], problems)
        if raw["name"] in seen_lessons:
            problems.append(f"{where}: duplicate lesson name")
            continue
        seen_lessons.add(raw["name"])
        exercises = []
        for j, ex in enumerate(raw.get("exercises", [])):
            ewhere = f"{where}, exercise #{j + 1}"
            if not isinstance(ex, dict):
                problems.append(f"{ewhere}: not a table")
                continue
            if isinstance(ex.get("name"), str):
                ewhere = f"exercise {ex['name']!r}"
            if not _check_fields(ewhere, ex, _EXERCISE_FIELDS, _EXERCISE_REQUIRED, problems):
                continue
            if not all(isinstance(h, str) and h.strip() for h in ex["hints"]):
                problems.append(f"{ewhere}: every hint must be a non-empty string")
                continue
            if not _relative_file(ewhere, ex["file"], problems):
                continue
            if not ex["check"].isidentifier():
                problems.append(f"{ewhere}: check {ex['check']!r} is not a module name")
                continue
            if ex["name"] in seen_exercises:
                problems.append(f"{ewhere}: duplicate exercise name (also in lesson {seen_exercises[ex['name']]!r})")
                continue
            if ex["file"] in seen_files:
                problems.append(f"{ewhere}: file {ex['file']!r} is also used by exercise {seen_files[ex['file']]!r}")
                continue
            if "timeout" in ex and ex["timeout"] <= 0:
                problems.append(f"{ewhere}: timeout must be positive")
                continue
            seen_exercises[ex["name"]] = raw["name"]
            seen_files[ex["file"]] = ex["name"]
            exercises.append(
                Exercise(
                    name=ex["name"],
                    lesson=raw["name"],
                    file=ex["file"],
                    check=ex["check"],
                    hints=tuple(ex["hints"]),
                    points=float(ex.get("points", 1.0)),
                    timeout=float(ex["timeout"]) if "timeout" in ex else None,
                    root=root,
                )
            )
        lessons.append(Lesson(raw["name"], raw["title"], raw["file"], tuple(exercises), root=root))
    title = data.get("title") if isinstance(data.get("title"), str) else ""
    return Catalog(title, tuple(lessons), root, problems, language=_language(data, problems))


def _language(data: dict, problems: list[str]) -> str | None:
    """The manifest's optional `language`: a key of course.i18n.LANGUAGES."""
    from course.i18n import LANGUAGES

    value = data.get("language")
    if not isinstance(value, str):
        return None  # absent, or already reported as the wrong type
    if value not in LANGUAGES:
        problems.append(f"manifest: language {value!r} is not one of {', '.join(sorted(LANGUAGES))}")
        return None
    return value


def _starter_editions(root: Path) -> list[str]:
    """The languages the course ships starters in besides English: the folders of starters/."""
    from course import i18n

    return [lang for lang in i18n.LANGUAGES if lang != i18n.DEFAULT and (root / "starters" / lang).is_dir()]


def validate(root: Path | None = None) -> list[str]:
    """Every problem with the manifest and the files it names (empty: all good)."""
    catalog = load_catalog(root, strict=False)
    problems = list(catalog.problems)
    croot = catalog.root
    for lesson in catalog.lessons:
        if not lesson.lesson_path().is_file():
            problems.append(_("lesson {name!r}: lesson text lessons/{file} is missing").format(
                name=lesson.name, file=lesson.file))
        for ex in lesson.exercises:
            if not (croot / "exercises" / ex.file).is_file():
                problems.append(_("exercise {name!r}: starter exercises/{file} is missing").format(
                    name=ex.name, file=ex.file))
            for lang in _starter_editions(croot):
                if not (croot / "starters" / lang / ex.file).is_file():
                    problems.append(f"exercise {ex.name!r}: starter starters/{lang}/{ex.file} is missing "
                                    f"(learners in {lang!r} get the English one)")
            if not ex.solution_path().is_file():
                problems.append(f"exercise {ex.name!r}: solution solutions/{ex.file} is missing")
            if not ex.check_path().is_file():
                problems.append(f"exercise {ex.name!r}: check module {ex.check}.py is missing")
            if len(ex.hints) < MIN_HINTS:
                problems.append(f"exercise {ex.name!r}: has {len(ex.hints)} hint(s), needs at least {MIN_HINTS}")
    return problems
