"""`jaxlings grade merge DIR... --out DIR`: one class's reports from the outputs of its shards.

Each shard (`jaxlings grade --shard K/N`) grades the learners whose id falls in
shard K and records the whole class's ids, the run seed and what it graded
with. The merge accepts only a complete, consistent set: every shard 1..N once,
every learner of the class graded exactly once, and one course, seed, set of
exercises, points and checks throughout. Anything else is refused with the
reason, since a gradebook with a learner missing or counted twice is worse
than none.
"""

from __future__ import annotations

import json
from pathlib import Path

from course.grader import reports, safe
from course.grader.batch import RESULTS_DIR, RUN_FILE, GradeError, Outcome, _load_results, secrets_for, shard_of

# What every shard of one class must agree on.
_SAME = {"seed": "seed", "config_key": "grading set-up (exercises, points or checks)",
         "course": "course (its checks or solutions)", "exercises": "set of exercises", "points": "points",
         "max_points": "points", "partial": "--partial setting", "extra_checks": "set of --checks folders",
         "versions": "Python or library versions"}


def merge(dirs: list[Path], out: Path) -> Outcome:
    if not dirs:
        raise GradeError("grade merge: give the shards' output folders: jaxlings grade merge DIR... --out DIR")
    runs = [_read_run(d) for d in dirs]
    first = runs[0]
    count = first["shard"]["count"]
    for d, run in zip(dirs, runs):
        for key, what in _SAME.items():
            if run.get(key) != first.get(key):
                raise GradeError(f"grade merge: {d} was graded with another {what} than {dirs[0]} "
                                 "(all shards must come from one command with the same --seed)")
        if run["shard"]["count"] != count or run["shard"]["class_ids"] != first["shard"]["class_ids"]:
            raise GradeError(f"grade merge: {d} split another class or into another number of shards than {dirs[0]}")
    by_index: dict[int, Path] = {}
    for d, run in zip(dirs, runs):
        k = run["shard"]["index"]
        if k in by_index:
            raise GradeError(f"grade merge: shard {k}/{count} given twice ({by_index[k]} and {d})")
        by_index[k] = d
    missing = [k for k in range(1, count + 1) if k not in by_index]
    if missing:
        raise GradeError(f"grade merge: shard(s) {', '.join(f'{k}/{count}' for k in missing)} missing")

    results: dict[str, dict] = {}
    for d, run in zip(dirs, runs):
        k = run["shard"]["index"]
        stray = [i for i in run["submissions"] if shard_of(i, count) != k]
        if stray:
            raise GradeError(f"grade merge: {d} holds learners of other shards ({', '.join(stray[:5])})")
        loaded = _load_results(d, run["submissions"])
        absent = sorted(set(run["submissions"]) - {r["id"] for r in loaded})
        if absent:
            raise GradeError(f"grade merge: {d} has no result for {', '.join(absent[:5])}"
                             f"{' ...' if len(absent) > 5 else ''}; finish it with --resume")
        for r in loaded:
            if r["id"] in results:
                raise GradeError(f"grade merge: {r['id']} was graded by two shards")
            results[r["id"]] = r
    gap = sorted(set(first["shard"]["class_ids"]) - set(results))
    if gap:
        raise GradeError(f"grade merge: no shard graded {', '.join(gap[:5])}{' ...' if len(gap) > 5 else ''}")

    out = out.resolve()
    if any(out == d.resolve() for d in dirs):
        raise GradeError("grade merge: --out must be a folder of its own, not one of the shards")
    if (out / RESULTS_DIR).exists() and any((out / RESULTS_DIR).glob("*.json")):
        raise GradeError(f"grade merge: {out} already holds graded results; choose another --out")
    merged = {k: v for k, v in first.items() if k not in ("shard", "submissions")}
    merged.update(
        started=min(r["started"] for r in runs), finished=max(r["finished"] for r in runs),
        jobs=sum(r.get("jobs", 0) for r in runs), shard=None, submissions=sorted(results),
        merged_from=[dict(folder=str(by_index[k].resolve()), shard=f"{k}/{count}") for k in sorted(by_index)],
        isolation=_weakest([r["isolation"] for r in runs]),
    )
    ordered = [results[i] for i in sorted(results)]
    for r in ordered:
        reports.write_atomic(out / RESULTS_DIR / f"{r['id']}.json",
                             json.dumps(safe.clean(r), indent=1, ensure_ascii=False) + "\n")
    reports.write_atomic(out / RUN_FILE, json.dumps(safe.clean(merged), indent=2) + "\n")
    from course.grader.batch import write_reports

    write_reports(out, merged, ordered, secrets_for([Path(p) for p in merged.get("extra_checks", [])]))
    return Outcome(merged, ordered, False)


def _read_run(d: Path) -> dict:
    f = d / RUN_FILE
    try:
        run = json.loads(f.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise GradeError(f"grade merge: {d} holds no {RUN_FILE}: not a grading output folder") from None
    except (OSError, ValueError) as exc:
        raise GradeError(f"grade merge: cannot read {f} ({exc})") from None
    if not run.get("shard"):
        raise GradeError(f"grade merge: {d} is not a shard (it was graded without --shard K/N)")
    if not run.get("finished"):
        raise GradeError(f"grade merge: {d} did not finish; complete it with --resume before merging")
    return run


def _weakest(isolations: list[dict]) -> dict:
    """The report claims only what every shard's isolation guaranteed."""
    order = isolations[0].get("order") or []
    rank = {t: i for i, t in enumerate(order)}
    return max(isolations, key=lambda iso: rank.get(iso.get("tier"), len(order)))
