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


# What the learner's process says, as lines: a plain string (the learner's own text: an
# exception, a source line, a file name) is shown as it is; a pair [template, fields] is
# one of CHILD_PHRASES, built here, on the trusted side, in the learner's language. The
# child needs no translations; it sends the English it would show and these lines.
CHILD_PHRASES = frozenset({
    N_("{error} {during}."),
    N_("your code called sys.exit({code}) {during}."),
    N_("your code ran out of memory {during}."),
    N_("{error} {during}: your code started more threads and processes than the {limit} allowed."),
    # {during}: one of these
    N_("while importing {file}"),
    N_("while running `{name}`"),
    N_("while the check used your code"),
    N_("while converting the value returned by `{name}`"),
    N_("while converting the value the check got from your code"),
    N_("in the check"),
    N_("Traceback (your code):"),
    N_("  {file}, line {line}, in {function}"),
    N_("  the check, line {line}, in {function}"),
    N_("Your custom rules:"),
    N_("  {file}, line {line}: the {rule} rule `{name}`"),
    N_("{file} does not define `{name}`."),
    N_("`{name}` in {file} is a {type}, but the check calls it."),
    N_("{file} imports `{name}`, which is not installed or does not exist."),
    N_("an import in {file} failed."),
    N_("cannot read {file}: {error}"),
    N_("{file} cannot be compiled: {error}"),
    N_("{file}, line {line}: {error}"),
    N_("`{name}{signature}` cannot be called the way the check calls it: {name}({arguments})."),
    N_("the learner's module is not loaded"),
})
_MAX_DEPTH = 3


def say(template: str, **fields: object) -> list:
    """One line of a child's message: a phrase of CHILD_PHRASES and its fields."""
    return [template, fields]


def render(lines: object, translate=None, depth: int = 0) -> str | None:
    """The child's lines as text, translated with `translate` (default: `_`); None if malformed.

    A child can send anything: only known phrases are built, each field is shown as text
    (never formatted again), and anything else makes the caller keep the child's message."""
    translate = translate or _
    if not isinstance(lines, list) or depth > _MAX_DEPTH:
        return None
    out = []
    for line in lines:
        text = _phrase(line, translate, depth) if isinstance(line, list) else line
        if not isinstance(text, str):
            return None
        out.append(text)
    return "\n".join(out)


def _phrase(pair: list, translate, depth: int) -> str | None:
    if len(pair) != 2 or pair[0] not in CHILD_PHRASES or not isinstance(pair[1], dict):
        return None
    fields = {}
    for key, value in pair[1].items():
        if isinstance(value, list):
            value = render([value], translate, depth + 1)
        if not isinstance(key, str) or not isinstance(value, (str, int)) or isinstance(value, bool):
            return None
        fields[key] = value
    try:
        return translate(pair[0]).format(**fields)
    except (KeyError, IndexError, ValueError):
        return None


def probe_said(said: object, phrases: dict) -> str | None:
    """What a check's probe reported, `[key, fields]`, as text in the learner's language.

    The probe runs in the learner's process, which cannot translate: it names one of the
    check's `phrases` (key -> template marked with N_) and sends the fields as text or
    integers; each is shown as it came (never formatted again). None if malformed."""
    if not (isinstance(said, list) and len(said) == 2 and isinstance(said[0], str) and said[0] in phrases
            and isinstance(said[1], dict)):
        return None
    fields = {}
    for key, value in said[1].items():
        if not isinstance(key, str) or not isinstance(value, (str, int)) or isinstance(value, bool):
            return None
        fields[key] = value
    try:
        return _(phrases[said[0]]).format(**fields)
    except (KeyError, IndexError, ValueError):
        return None
