"""What a check run gives back: each test's outcome and the exercise's verdict.

Built in the trusted process from pytest's own reports (`course.engine.pytest_run`),
never from anything the learner's child says about itself.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from course.engine.words import N_, _

CAUSES = (
    "syntax_error", "import_error", "missing_name", "signature", "exception", "timeout",
    "out_of_memory", "crash", "exit", "not_plain_data", "wrong_result", "no_result", "check_error",
    "channel_closed", "too_many_processes",
)

# In English; `headline()` gives them in the language in use.
HEADLINES = {
    "syntax_error": N_("Python cannot read your file (syntax error)"),
    "import_error": N_("Your file could not be imported"),
    "missing_name": N_("Something the exercise asks for is missing"),
    "signature": N_("A function has the wrong signature"),
    "exception": N_("Your code raised an exception"),
    "timeout": N_("Your code took too long"),
    "out_of_memory": N_("Your code ran out of memory"),
    "crash": N_("The process running your code crashed"),
    "exit": N_("Your code ended its own process"),
    "not_plain_data": N_("Your code returned something the check cannot read"),
    "wrong_result": N_("Wrong result"),
    "no_result": N_("Your code returned nothing"),
    "check_error": N_("The check could not run"),
    "channel_closed": N_("Your code closed the channel the check talks to it through"),
    "too_many_processes": N_("Your code started too many processes"),
}


def headline(cause: str | None, default: str = N_("Failed")) -> str:
    """The headline of a failure cause, in the language in use."""
    return _(HEADLINES.get(cause or "check_error", default))


@dataclass
class CheckOutcome:
    name: str
    outcome: str  # "passed" | "failed" | "error" | "skipped"
    cause: str | None
    message: str
    duration: float
    # Where in the learner's file it failed, when that is known: the innermost line of theirs an
    # exception passed through, a syntax error's line, the line a timeout was running. Fields,
    # so that the app's go-to-line, editors and scripts (`check --json`) read the same line in
    # every language; the message only says it in words.
    file: str | None = None
    line: int | None = None


@dataclass
class ExerciseResult:
    exercise: str
    passed: bool
    cause: str | None  # the first failing check's cause
    message: str  # a friendly summary for the learner
    checks: list[CheckOutcome]
    duration: float
    seed: int
    output: str = ""  # the tail of what the learner's code printed
    # The first failing check's place in the learner's file (CheckOutcome.file and .line), if it has one.
    file: str | None = None
    line: int | None = None
    # What each test asked of the learner's process and of the evaluator: {test: {"call": n, "probe": n,
    # "has": n, "programs": n}} (`jaxlings dev check` compares it with the evidence a check declares).
    trace: dict = field(default_factory=dict, compare=False, repr=False)

    def to_dict(self) -> dict:
        d = asdict(self)
        d.pop("trace")
        return d

    @property
    def headline(self) -> str:
        if self.passed:
            return _("All checks passed")
        return headline(self.cause)
