"""Which external editor the course opens (the app's Ctrl+O), and why not when it can't.

The app asks before handing the terminal over: a missing program must be a
message, never a suspended screen waiting for an editor that never started.
`jaxlings doctor` reports the same answer.
"""

from __future__ import annotations

import os
import shlex
import shutil
from collections.abc import Mapping

from course.i18n import _

VARIABLES = ("VISUAL", "EDITOR")
FALLBACKS = ("nano", "vim", "vi", "emacs")
# GUI editors that return at once unless told to wait: the app would reload the
# file before the learner has typed anything.
NEEDS_WAIT = {"code": "--wait", "codium": "--wait", "code-insiders": "--wait", "subl": "--wait",
              "atom": "--wait", "zed": "--wait", "mate": "--wait", "gedit": "--wait"}


def resolve_editor(env: Mapping[str, str] | None = None) -> tuple[list[str] | None, str | None]:
    """(argv, problem): the command Ctrl+O runs (the file's path is appended), and a
    sentence for the learner when something is wrong.

    argv None: nothing to run, `problem` says why. Both set: the editor runs but
    the learner should know something (a GUI editor without `--wait`). $VISUAL
    wins over $EDITOR; a variable that names a missing program is reported, not
    skipped, so the learner's setting is never silently replaced. With neither
    set, the first of nano, vim, vi, emacs on PATH.
    """
    env = os.environ if env is None else env
    search_path = env.get("PATH", os.defpath)
    for var in VARIABLES:
        value = env.get(var, "").strip()
        if not value:
            continue
        try:
            argv = shlex.split(value)
        except ValueError as e:
            return None, _("${var} ({value!r}) cannot be split into a command: {error}.").format(
                var=var, value=value, error=e)
        if not argv:
            continue
        program = argv[0]
        if _find(program, search_path) is None:
            message = (_("${var} is {value!r}, but {program!r} does not exist or is not executable. ")
                       if os.sep in program else _("${var} is {value!r}, but {program!r} is not on PATH. "))
            return None, (message + _("Install it, or set {var} to an editor you have "
                                      "(for example: export {var}=nano).")).format(var=var, value=value,
                                                                                   program=program)
        wait = NEEDS_WAIT.get(os.path.basename(program))
        if wait is not None and not any(a in (wait, "-w") for a in argv[1:]):
            return argv, _("${var} is {value!r}: {program} returns at once without {wait}, so the app reloads "
                           "your file before you have edited it. Use: export {var}='{value} {wait}'.").format(
                var=var, value=value, program=os.path.basename(program), wait=wait)
        return argv, None
    for name in FALLBACKS:
        if _find(name, search_path) is not None:
            return [name], None
    return None, _("neither $VISUAL nor $EDITOR is set and none of nano, vim, vi, emacs is on PATH. "
                   "Set one, for example: export EDITOR=nano.")


def _find(program: str, search_path: str) -> str | None:
    if os.sep in program:
        return program if os.path.isfile(program) and os.access(program, os.X_OK) else None
    return shutil.which(program, path=search_path)


def describe_editor(env: Mapping[str, str] | None = None) -> dict:
    """What `doctor` reports: the variables, the resolved command, the problem, and in words
    what Ctrl+O in the app will do."""
    env = os.environ if env is None else env
    argv, problem = resolve_editor(env)
    if argv is None:
        ctrl_o = _("shows this problem instead of opening an editor")
    else:
        ctrl_o = _("opens your file with: {command} <file>").format(command=shlex.join(argv))
    return {
        "VISUAL": env.get("VISUAL") or None,
        "EDITOR": env.get("EDITOR") or None,
        "argv": argv,
        "found": _find(argv[0], env.get("PATH", os.defpath)) if argv else None,
        "problem": problem,
        "ctrl_o": ctrl_o,
    }
