"""How complete each edition other than English is, for `jaxlings doctor`.

Per language: the messages of each gettext domain with no translation (or a
fuzzy one), the messages the code hands to gettext that the catalog does not
have yet (where the course's extraction settings are at hand: a checkout), the
catalogs that are missing or do not compile, the translations whose
`{placeholders}` differ from the English (they would raise when shown), and the
lessons with no `lessons/<lang>/` edition (those open in English), and the messages of
the checks and the engine that are not marked for translation at all (`course.i18n.unmarked`:
those show in English in every language).
"""

from __future__ import annotations

import io
import os
import re
from pathlib import Path
from typing import Any

from course import i18n
from course.i18n import _

_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")
# What `make catalogs` reads to find each domain's messages, at the root of a checkout.
EXTRACTION = {i18n.DOMAIN: "babel-ui.cfg", i18n.APP: "babel-app.cfg", i18n.CONTENT: "babel-content.cfg"}


def language_state(lang: str, lessons: list[Any], lessons_dir: Path,
                   source_root: Path | None = None) -> dict[str, Any]:
    """What is missing or broken in `lang`'s edition (all empty: complete)."""
    state: dict[str, Any] = {"untranslated": {}, "not_in_catalog": {}, "broken_catalogs": {},
                             "placeholder_mismatches": {}, "lessons_missing": [],
                             "unmarked": _unmarked_count(source_root)}
    for domain in i18n.DOMAINS:
        path = i18n.po_path(lang, domain)
        if not path.is_file():
            state["broken_catalogs"][domain] = _("the catalog {path} is missing").format(path=path)
            continue
        try:
            catalog = _read_and_compile(path, lang, domain)
        except Exception as e:  # noqa: BLE001 - babel and gettext raise many kinds; doctor reports them all
            state["broken_catalogs"][domain] = f"{type(e).__name__}: {e}"
            continue
        missing = i18n.missing_translations(lang, domain)
        if missing:
            state["untranslated"][domain] = len(missing)
        bad = _placeholder_mismatches(catalog)
        if bad:
            state["placeholder_mismatches"][domain] = bad
        absent = _not_in_catalog(domain, catalog, source_root)
        if absent:
            state["not_in_catalog"][domain] = absent
    state["lessons_missing"] = [lesson.file for lesson in lessons if not (lessons_dir / lang / lesson.file).is_file()]
    return state


def _unmarked_count(source_root: Path | None) -> int:
    """Messages of the checks (the course's own, or a course root's `checks/`) and of the engine
    written out in English, outside `_()`: a failed check shows them in English."""
    from course.catalog import checks_dir
    from course.i18n.unmarked import unmarked_messages

    engine = Path(__file__).resolve().parents[1] / "engine"
    return len(unmarked_messages(checks_dir(source_root), engine))


def _read_and_compile(path: Path, lang: str, domain: str):
    """The catalog, read strictly and compiled in memory the way `make` and the course load it."""
    import gettext

    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po

    with path.open("rb") as f:
        catalog = read_po(f, locale=lang, domain=domain, abort_invalid=True)
    buffer = io.BytesIO()
    write_mo(buffer, catalog, use_fuzzy=False)
    buffer.seek(0)
    gettext.GNUTranslations(buffer)
    return catalog


def _not_in_catalog(domain: str, catalog, source_root: Path | None) -> int:
    """How many messages the code marks for `domain` that `catalog` lacks (0 without a checkout's settings)."""
    if source_root is None or not (source_root / EXTRACTION[domain]).is_file():
        return 0
    from babel.messages.extract import extract, extract_from_dir
    from babel.messages.frontend import parse_mapping_cfg
    from babel.util import pathmatch

    with (source_root / EXTRACTION[domain]).open(encoding="utf-8") as f:
        method_map, options_map = parse_mapping_cfg(f)
    keywords = {"_": None, "N_": None, "ngettext": (1, 2), "gettext": None}
    # Where the learner works in the course's own folder, its exercises/ are their working files
    # (a starter they put in their language, code they wrote): the course's own are the committed ones.
    working = _working_exercises(source_root)

    def course_folder(path: str) -> bool:
        # Babel's own rule (its filter is deprecated): no hidden or private folders (.git, __pycache__).
        if os.path.basename(path).startswith((".", "_")):
            return False
        return not (working is not None and Path(path).resolve() == working)

    found = [message for _file, _line, message, _comments, _context
             in extract_from_dir(source_root, method_map, options_map, keywords=keywords,
                                 directory_filter=course_folder)]
    if working is not None:
        for name, data in _committed(source_root, "exercises").items():
            pattern, method = next(((p, m) for p, m in method_map if pathmatch(p, name)), ("", "ignore"))
            if method != "ignore":
                found += [message for _line, message, _comments, _context
                          in extract(method, io.BytesIO(data), keywords=keywords, options=options_map.get(pattern))]
    marked = {message if isinstance(message, str) else message[0] for message in found}
    known = {m.id if isinstance(m.id, str) else m.id[0] for m in catalog if m.id}
    return len(marked - known)


def _working_exercises(source_root: Path) -> Path | None:
    """`source_root/exercises` where it is the learner's working folder, else None."""
    from course import paths

    folder = (source_root / "exercises").resolve()
    return folder if paths.exercises_dir().resolve() == folder else None


def _committed(root: Path, folder: str) -> dict[str, bytes]:
    """The files under `folder` as committed in the git checkout at `root` (none where it is not one)."""
    import subprocess

    def git(*args: str) -> bytes | None:
        try:
            done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            return None
        return done.stdout if done.returncode == 0 else None

    names = git("ls-tree", "-r", "-z", "--name-only", "HEAD", "--", folder) or b""
    files = {}
    for name in filter(None, names.decode("utf-8", "surrogateescape").split("\0")):
        data = git("show", f"HEAD:{name}")
        if data is not None:
            files[name] = data
    return files


def _placeholder_mismatches(catalog) -> list[str]:
    """English messages whose translation names other `{placeholders}`: showing them would fail."""
    bad = []
    for message in catalog:
        if not message.id or message.fuzzy:
            continue
        ids = message.id if isinstance(message.id, (list, tuple)) else [message.id]
        strings = message.string if isinstance(message.string, (list, tuple)) else [message.string]
        wanted = _placeholders(ids[-1])
        if any(s and _placeholders(s) != wanted for s in strings):
            bad.append(ids[0])
    return bad


def _placeholders(text: str) -> set[str]:
    return set(_PLACEHOLDER.findall(text.replace("{{", "").replace("}}", "")))


def report(catalog: Any) -> dict[str, dict[str, Any]]:
    """`language_state` of every language other than English."""
    root = catalog.root if getattr(catalog, "root", None) else _course_root()
    return {lang: language_state(lang, list(catalog.lessons), root / "lessons", root)
            for lang in i18n.LANGUAGES if lang != i18n.DEFAULT}


def _course_root() -> Path:
    from course import paths

    return paths.course_root()


def _shown(path: Path) -> str:
    """A catalog's path from the course's root, where it lies inside it (shorter to read)."""
    try:
        return path.relative_to(i18n.LOCALE_DIR.parent.parent).as_posix()
    except ValueError:
        return str(path)


def warnings(states: dict[str, dict[str, Any]]) -> list[str]:
    """Each problem as what it means for whoever reads `doctor` (mostly a learner, who can do nothing
    about it), and what the course's maintainers do about it."""
    out = []
    for lang, state in states.items():
        name = i18n.LANGUAGES.get(lang, lang)
        for domain, count in state["untranslated"].items():
            out.append(i18n.ngettext(
                "{language}: {n} message of the {domain} catalog has no translation (or a fuzzy one); "
                "it shows in English until the course's maintainers translate it in {path} "
                "(`make catalogs` adds new messages).",
                "{language}: {n} messages of the {domain} catalog have no translation (or a fuzzy one); "
                "they show in English until the course's maintainers translate them in {path} "
                "(`make catalogs` adds new messages).",
                count).format(language=name, n=count, domain=domain, path=_shown(i18n.po_path(lang, domain))))
        for domain, count in state["not_in_catalog"].items():
            out.append(i18n.ngettext(
                "{language}: {n} message of the code is not in the {domain} catalog yet; it shows in English "
                "until the course's maintainers run `make catalogs` and translate it in {path}.",
                "{language}: {n} messages of the code are not in the {domain} catalog yet; they show in English "
                "until the course's maintainers run `make catalogs` and translate them in {path}.",
                count).format(language=name, n=count, domain=domain, path=_shown(i18n.po_path(lang, domain))))
        for domain, error in state["broken_catalogs"].items():
            out.append(_("{language}: the {domain} catalog does not compile cleanly ({error}); its messages "
                         "may show in English until the course's maintainers fix {path} and then run `make`.").format(
                language=name, domain=domain, error=error, path=_shown(i18n.po_path(lang, domain))))
        for domain, ids in state["placeholder_mismatches"].items():
            out.append(_("{language}: in {path}, the translation of {message!r} names other {{placeholders}} "
                         "than the English; the course's maintainers need to make them the same.").format(
                language=name, path=_shown(i18n.po_path(lang, domain)), message=ids[0][:60])
                + (" " + _("({n} more like it)").format(n=len(ids) - 1) if len(ids) > 1 else ""))
        if state.get("unmarked"):
            out.append(i18n.ngettext(
                "{language}: {n} message of the checks and the engine is not marked for translation; a failed "
                "check shows it in English until the course's maintainers mark it with _() and translate it "
                "(`make catalogs`).",
                "{language}: {n} messages of the checks and the engine are not marked for translation; a failed "
                "check shows them in English until the course's maintainers mark them with _() and translate them "
                "(`make catalogs`).",
                state["unmarked"]).format(language=name, n=state["unmarked"]))
        if state["lessons_missing"]:
            files = state["lessons_missing"]
            out.append(i18n.ngettext(
                "{language}: {n} lesson has no edition in lessons/{lang}/ ({files}); it opens in English until "
                "the course's maintainers translate it from lessons/, keeping its code blocks byte for byte.",
                "{language}: {n} lessons have no edition in lessons/{lang}/ ({files}); they open in English until "
                "the course's maintainers translate them from lessons/, keeping their code blocks byte for byte.",
                len(files)).format(language=name, n=len(files), lang=lang,
                                   files=", ".join(files[:5]) + (", ..." if len(files) > 5 else "")))
    return out
