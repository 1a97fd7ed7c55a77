"""The course's languages: English (the source text) and Japanese, through gettext.

Every string a learner reads outside the lessons is written in English in the
code and wrapped in `_()`; `course/locale/<lang>/LC_MESSAGES/<domain>.po` holds
its translations: `jaxlings` for the CLI, engine and lab, `app` for the Textual
app, `content` for titles, hints and task statements. `make` compiles the `.po` into a `.mo`; when the `.mo` is
missing or older than the `.po` (a fresh checkout, an edited catalog) it is
compiled again here, so a learner never sees a stale translation.

Which language: `--lang`, else `JAXLINGS_LANG`, else the choice saved in
`.jaxlings/settings.json`, else the course's default (its manifest's
`language`), else the locale (`LC_ALL`, `LC_MESSAGES`, `LANG` starting with
`ja`), else English.

Strings defined at import time (tables of labels, help texts) are marked with
`N_()` and translated with `_()` where they are shown, so a language switched
while the app runs reaches them too.

Everything about languages lives in this package, beside the catalogs in
`course/locale/`:

- this module: choosing the language, loading and compiling the catalogs, `_()`;
- `linebreak`: where Japanese lines may break, in Rich, Textual and the shell's output;
- `extract`: Babel extractors for the content catalog (titles, hints, task statements);
- `state`: how complete each edition is, for `jaxlings doctor`;
- `unmarked`: the messages of the checks and the engine not yet marked for translation.
"""

from __future__ import annotations

import gettext
import json
import os
import re
import tempfile
from pathlib import Path

DOMAIN = "jaxlings"  # the CLI, the check headlines, the lab, the grader
APP = "app"  # the Textual app's own words (course/tui); `_` looks here when DOMAIN has nothing
CONTENT = "content"  # the course's words outside the lessons: titles, hints, task statements
DOMAINS = (DOMAIN, APP, CONTENT)
LANGUAGES: dict[str, str] = {"en": "English", "ja": "日本語"}
DEFAULT = "en"
LOCALE_DIR = Path(__file__).resolve().parents[1] / "locale"  # course/locale, beside this package
SETTINGS_FILE = "settings.json"

_translation: gettext.NullTranslations = gettext.NullTranslations()
_content: gettext.NullTranslations = gettext.NullTranslations()
_language = DEFAULT


def _(message: str) -> str:
    """`message` in the current language (itself in English or when untranslated)."""
    return _translation.gettext(message)


def ngettext(singular: str, plural: str, n: int) -> str:
    return _translation.ngettext(singular, plural, n)


def content(message: str) -> str:
    """A title, hint or task statement from the course's content, in the current language."""
    return _content.gettext(message)


def N_(message: str) -> str:
    """Mark `message` for the catalog without translating it yet (see the module doc)."""
    return message


# A sentence that ends in Japanese punctuation (rich markup closing after it allowed).
_CLOSED = re.compile(r"[。！？」』）]\s*(\[/[^\]]*\])*\s*$")


def join_sentences(*parts: str) -> str:
    """Sentences one after another: a space after an English one, none after 。 (Japanese puts none)."""
    text = ""
    for part in parts:
        if not part:
            continue
        if text and not _CLOSED.search(text):
            text += " "
        text += part
    return text


def language() -> str:
    """The language in use: a key of LANGUAGES."""
    return _language


def normalize(lang: str | None) -> str | None:
    """'ja', 'ja_JP.UTF-8', 'JA' -> 'ja'; 'en_US' -> 'en'; anything else -> None."""
    if not lang:
        return None
    code = lang.strip().replace("-", "_").split(".")[0].split("_")[0].lower()
    return code if code in LANGUAGES else None


def po_path(lang: str, domain: str = DOMAIN) -> Path:
    return LOCALE_DIR / lang / "LC_MESSAGES" / f"{domain}.po"


def mo_path(lang: str, domain: str = DOMAIN) -> Path:
    return po_path(lang, domain).with_suffix(".mo")


def compile_catalog(lang: str, domain: str = DOMAIN, target: Path | None = None) -> Path:
    """Compile the `.po` of `lang` to a `.mo` (beside it, unless `target` says where)."""
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po

    source = po_path(lang, domain)
    with source.open("rb") as f:
        catalog = read_po(f, locale=lang, domain=domain)
    target = target or mo_path(lang, domain)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            write_mo(f, catalog, use_fuzzy=False)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def _load(lang: str, domain: str = DOMAIN) -> gettext.NullTranslations:
    try:
        return _load_compiled(lang, domain)
    except Exception:  # noqa: BLE001 - a broken catalog must not stop the course: English, and `doctor` says why
        return gettext.NullTranslations()


def _load_compiled(lang: str, domain: str) -> gettext.NullTranslations:
    if lang == DEFAULT or not po_path(lang, domain).is_file():
        return gettext.NullTranslations()
    mo = mo_path(lang, domain)
    try:
        stale = not mo.is_file() or mo.stat().st_mtime < po_path(lang, domain).stat().st_mtime
    except OSError:
        stale = True
    if stale:
        try:
            mo = compile_catalog(lang, domain)
        except OSError:  # a read-only install: compile where we may write
            private = Path(tempfile.gettempdir()) / f"jaxlings-{os.getuid()}" / lang / f"{domain}.mo"
            mo = compile_catalog(lang, domain, private)
    with mo.open("rb") as f:
        return gettext.GNUTranslations(f)


def set_language(lang: str | None) -> str:
    """Use `lang` from now on (unknown or None: English); returns the language in use."""
    global _translation, _content, _language
    code = normalize(lang) or DEFAULT
    _translation = _load(code, DOMAIN)
    _translation.add_fallback(_load(code, APP))
    _content = _load(code, CONTENT)
    _language = code
    return code


def locale_language(env: dict[str, str] | os._Environ | None = None) -> str | None:
    """The language the locale asks for, the way gettext reads it (first set variable wins)."""
    env = os.environ if env is None else env
    for var in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = env.get(var)
        if value:
            return normalize(value)
    return None


def settings_path(state_dir: Path | None = None) -> Path:
    if state_dir is None:
        from course.paths import state_dir as default_state_dir

        state_dir = default_state_dir()
    return Path(state_dir) / SETTINGS_FILE


def saved_language(state_dir: Path | None = None) -> str | None:
    """The language saved by the app's settings (None: none saved, or the file is unreadable)."""
    if state_dir is None:
        from course.paths import state_dir as default_state_dir

        state_dir = default_state_dir(claim=False)  # reading claims no workspace
    try:
        data = json.loads(settings_path(state_dir).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return normalize(data.get("language")) if isinstance(data, dict) and isinstance(data.get("language"), str) else None


def save_language(lang: str, state_dir: Path | None = None) -> None:
    """Remember `lang` in .jaxlings/settings.json, keeping any other setting (atomic write)."""
    code = normalize(lang) or DEFAULT
    path = settings_path(state_dir)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict):
            data = {}
    except (OSError, ValueError):
        data = {}
    data["language"] = code
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, ensure_ascii=False, indent=1)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def resolve_language(cli: str | None = None, env: dict[str, str] | os._Environ | None = None,
                     state_dir: Path | None = None, course: str | None = None) -> str:
    """The language to start in: --lang, JAXLINGS_LANG, the saved choice, the course's own
    default (its manifest's `language`), the locale, English."""
    env = os.environ if env is None else env
    return (normalize(cli) or normalize(env.get("JAXLINGS_LANG")) or saved_language(state_dir)
            or normalize(course) or locale_language(env) or DEFAULT)


def missing_translations(lang: str, domain: str = DOMAIN) -> list[str]:
    """The catalog's messages with no translation, or a fuzzy one, in `lang` (for `doctor`)."""
    from babel.messages.pofile import read_po

    with po_path(lang, domain).open("rb") as f:
        catalog = read_po(f, locale=lang, domain=domain)
    missing = []
    for message in catalog:
        if not message.id:
            continue
        strings = message.string if isinstance(message.string, (list, tuple)) else [message.string]
        if message.fuzzy or not all(strings):
            missing.append(message.id if isinstance(message.id, str) else message.id[0])
    return missing
