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
    integers; each is shown as text (never formatted again, control characters written as escapes,
    cut at MAX_FIELD_CHARS). None if malformed."""
    if not (isinstance(said, list) and len(said) == 2 and isinstance(said[0], str) and said[0] in phrases
            and isinstance(said[1], dict)):
        return None
    fields = {}
    for key, value in said[1].items():
        if not isinstance(key, str) or not isinstance(value, (str, int)) or isinstance(value, bool):
            return None
        fields[key] = shown_field(value)  # the learner's text: escapes written out, length bounded
    try:
        return _(phrases[said[0]]).format(**fields)
    except (KeyError, IndexError, ValueError):
        return None


# A field of an engine message (`fill`): learner-controlled text (an op name, XLA's or MLIR's
# words about the learner's program) is shown as text, at most this long, with control and
# format characters (a terminal's escapes, a newline, a bidi override) written as escapes.
MAX_FIELD_CHARS = 300
_UNSEEN = None


def shown_field(value: object) -> int | float | str:
    """`value` as a message field: an int or a float as it is, anything else as safe text."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    global _UNSEEN
    if _UNSEEN is None:
        import re

        # C0 and C1 controls, DEL, and the format characters (Cf) a terminal may act on.
        _UNSEEN = re.compile("[\x00-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e"
                             "\u2060-\u206f\ufeff\ufff9-\ufffb]")
    text = value if isinstance(value, str) else str(value)
    text = _UNSEEN.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100
                       else f"\\u{ord(m.group()):04x}", text)
    return text if len(text) <= MAX_FIELD_CHARS else text[:MAX_FIELD_CHARS - 1] + "…"


def plain_fields(raw: object) -> dict | None:
    """The fields of an engine message that came from another process (`{name: str | int |
    float}`), each made safe by `shown_field`; None if they are anything else."""
    if not isinstance(raw, dict) or len(raw) > 16:
        return None
    fields = {}
    for key, value in raw.items():
        if not isinstance(key, str) or not key.isidentifier() or isinstance(value, bool) \
                or not isinstance(value, (str, int, float)):
            return None
        fields[key] = shown_field(value)
    return fields


def fill(template: str, fields: dict, translate=None) -> str:
    """`template` (an English text marked with N_, trusted) in the language in use, its fields put in.

    Only the template is a format string: a field is a value, shown as it is, so a `{`
    in it is text. A translation whose fields do not fit falls back to the English."""
    translate = translate or _
    for text in (translate(template), template):
        try:
            return text.format(**fields)
        except (KeyError, IndexError, ValueError, TypeError, AttributeError):
            continue
    return template
