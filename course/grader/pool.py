"""A bounded pool of long-lived worker processes, one submission at a time each.

The pool is the only writer of results. A worker that dies or runs past the
per-submission limit is killed with its whole process group and replaced; the
exercises it finished keep their results and the rest are recorded with the
reason, so one bad submission never stops the batch.

With at least twice as many workers as submissions (a lone hand-in on GitHub
Classroom, a learner regraded on their own) each submission is split into one
part per exercise (`split`), which the workers take as they come free; the
parts' results are joined into one (`join`) before it is recorded: a submission
is recorded whole or not at all, as before. Each part has the submission's time
limit.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

from course.grader.results import finish, not_run
from course.grader.scoring import Scheme, derive_seed


# A worker drops JAX's caches as it grows (see worker.Forgetting), but anything
# else a check leaves behind would still add up over a class: a worker that has
# grown past RECYCLE_RSS_MB is retired after its submission and a fresh one takes
# its place.
RECYCLE_RSS_MB = 1024
RECYCLE_SUBMISSIONS = 0  # 0: only by memory


class PoolError(Exception):
    """The workers cannot start; the message says why."""


@dataclass
class _Slot:
    index: int
    proc: subprocess.Popen
    ready: bool = False
    job: dict | None = None
    started: float = 0.0
    partial: dict = field(default_factory=dict)  # exercise -> result, for the job in hand
    graded: int = 0  # submissions this worker finished
    worn: bool = False  # to be replaced before its next submission
    last_id: str | None = None  # the submission it graded last (a part of, or whole)


class Pool:
    def __init__(self, config: dict, jobs: int, submission_timeout: float,
                 on_event: Callable[[dict], None]) -> None:
        self.config = config
        self.jobs = max(1, jobs)
        self.submission_timeout = submission_timeout
        self.on_event = on_event
        self.events: queue.Queue = queue.Queue()
        self.slots: list[_Slot] = []
        self.scheme = Scheme(**config["scheme"])
        recycle = config.get("recycle") or {}
        self.recycle_rss_mb = recycle.get("rss_mb", RECYCLE_RSS_MB)
        self.recycle_submissions = recycle.get("submissions", RECYCLE_SUBMISSIONS)
        self.workers_started = 0
        self.memory: list[dict] = []  # per finished submission: the worker's memory after it

    # -- workers ----------------------------------------------------------

    def _spawn(self, index: int) -> _Slot:
        env = dict(os.environ)
        env.pop("JAXLINGS_SEED", None)  # seeds come from the run, never the grader's shell
        env.pop("PYTHONSTARTUP", None)
        # The same `course` package as this process's, named explicitly rather than found via the cwd.
        package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH", "")) if p)
        # -P and a private cwd: no folder graded code can write (the caller's cwd, a copy
        # under /tmp) is ever on the trusted worker's sys.path, so a planted `orbax.py`
        # is never imported by it.
        proc = subprocess.Popen(
            [sys.executable, "-P", "-s", "-m", "course.grader.worker"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=None, text=True, bufsize=1, env=env, start_new_session=True,
            cwd=self.config["isolation"]["work_root"],
        )
        slot = _Slot(index, proc)
        self.workers_started += 1
        # The feedback is written in the course language the instructor chose (`--lang`).
        from course.i18n import language

        proc.stdin.write(json.dumps({**self.config, "slot": index, "lang": language()}) + "\n")
        proc.stdin.flush()
        threading.Thread(target=self._read, args=(slot,), daemon=True).start()
        return slot

    def _read(self, slot: _Slot) -> None:
        proc = slot.proc
        for line in proc.stdout:
            try:
                self.events.put((slot, proc, json.loads(line)))
            except json.JSONDecodeError:
                continue
        self.events.put((slot, proc, None))

    def _kill(self, slot: _Slot) -> None:
        try:
            os.killpg(slot.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        slot.proc.wait()

    def close(self) -> None:
        for slot in self.slots:
            if slot.proc.poll() is None:
                self._kill(slot)

    # -- the loop ---------------------------------------------------------

    def run(self, todo: list[dict], on_result: Callable[[dict], None]) -> None:
        outstanding = len(todo)
        pending = split(todo, self.jobs, [e["name"] for e in self.config["exercises"]])
        self._parts: dict[str, list] = {}  # submission id -> the results of its parts so far
        self._began: dict[str, float] = {}  # submission id -> when its first part started
        self.slots = [self._spawn(i) for i in range(min(self.jobs, max(1, len(pending))))]
        try:
            while outstanding:
                for slot in list(self.slots):
                    if slot.ready and slot.job is None and pending:
                        if slot.worn:
                            self._retire(slot)  # only when there is more work: the last one just ends
                        else:
                            job = pending.pop(0)
                            if self._overdue(job):  # its submission's time is up: settled unrun
                                outstanding -= self._settle(job, self._salvage(
                                    job, {}, "timeout", self._timeout_message(), self._since(job)), on_result)
                            else:
                                self._assign(slot, job)
                try:
                    slot, proc, msg = self.events.get(timeout=0.5)
                except queue.Empty:
                    slot = proc = msg = None
                # Events from a worker already replaced are stale: its job is settled.
                if slot is not None and proc is slot.proc and any(s is slot for s in self.slots):
                    outstanding -= self._handle(slot, msg, on_result)
                outstanding -= self._enforce_deadlines(on_result)
        finally:
            self.close()

    def _assign(self, slot: _Slot, job: dict) -> None:
        slot.job, slot.started, slot.partial = job, time.monotonic(), {}
        if job.get("part") is not None:
            self._began.setdefault(job["id"], slot.started)
        slot.proc.stdin.write(json.dumps(job) + "\n")
        slot.proc.stdin.flush()
        self.on_event({"event": "start", "submission": job["id"], "slot": slot.index})

    def _handle(self, slot: _Slot, msg: dict | None, on_result) -> int:
        if msg is None:  # the worker is gone
            if slot.job is None and not slot.ready:
                raise PoolError("a grading worker exited while starting; run again with --jobs 1 to see why")
            return self._replace(slot, on_result, "grader_error",
                                 "the grading worker stopped unexpectedly while grading this submission")
        kind = msg.get("event")
        if kind == "fatal":
            raise PoolError(f"a grading worker could not start: {msg.get('message')}")
        if kind == "ready":
            slot.ready = True
        elif kind == "exercise" and slot.job and msg["submission"] == slot.job["id"]:
            slot.partial[msg["exercise"]] = msg["result"]
            self.on_event(msg)
        elif kind == "done" and slot.job and msg["submission"] == slot.job["id"]:
            job, slot.job = slot.job, None
            if job.get("part") is None or job["id"] != slot.last_id:  # parts of one submission count once
                slot.graded += 1
            slot.last_id = job["id"]
            mem = msg.get("memory") or {}
            self.memory.append(dict(submission=msg["submission"], pid=slot.proc.pid, **mem))
            msg["result"]["worker"] = dict(pid=slot.proc.pid, submissions=slot.graded, **mem)
            if isinstance(msg.get("children"), dict):  # sandboxed children: forked from a zygote, or fresh
                msg["result"]["worker"]["children"] = msg["children"]
            slot.worn = self._worn_out(slot, mem)
            return self._settle(job, msg["result"], on_result)
        return 0

    def _settle(self, job: dict, result: dict, on_result) -> int:
        """Record a submission once every part of it is in; returns how many submissions that settles."""
        part = job.get("part")
        if part is None:
            on_result(result)
            return 1
        parts = self._parts.setdefault(job["id"], [])
        parts.append(result)
        if len(parts) < part[1]:
            return 0
        del self._parts[job["id"]]
        joined = join(parts, self.config["exercises"])
        # From its first part's start to now: the parts ran side by side, and one after another.
        joined["duration"] = round(time.monotonic() - self._began.pop(job["id"], time.monotonic()), 3)
        on_result(joined)
        return 1

    def _worn_out(self, slot: _Slot, mem: dict) -> bool:
        if self.recycle_submissions and slot.graded >= self.recycle_submissions:
            return True
        return bool(self.recycle_rss_mb) and float(mem.get("rss_mb") or 0) > self.recycle_rss_mb

    def _retire(self, slot: _Slot) -> None:
        """End an idle worker and start a fresh one in its place (it imports JAX while others work)."""
        self._kill(slot)
        self.slots[self.slots.index(slot)] = self._spawn(slot.index)

    def _since(self, job: dict) -> float:
        """How long the submission has been graded: a part's clock is its submission's."""
        began = self._began.get(job["id"]) if job.get("part") is not None else None
        return time.monotonic() - (began if began is not None else time.monotonic())

    def _overdue(self, job: dict) -> bool:
        return job.get("part") is not None and self._since(job) > self.submission_timeout

    def _timeout_message(self) -> str:
        return (f"the submission ran past its total time limit "
                f"({self.submission_timeout:.0f} s) before this exercise was checked")

    def _enforce_deadlines(self, on_result) -> int:
        done = 0
        now = time.monotonic()
        for slot in list(self.slots):
            if slot.job is None:
                continue
            began = self._began.get(slot.job["id"], slot.started) if slot.job.get("part") else slot.started
            if now - began > self.submission_timeout:
                done += self._replace(slot, on_result, "timeout", self._timeout_message())
        return done

    def _replace(self, slot: _Slot, on_result, cause: str, message: str) -> int:
        self._kill(slot)
        job = slot.job
        self.slots[self.slots.index(slot)] = self._spawn(slot.index)
        if job is None:
            return 0
        result = self._salvage(job, slot.partial, cause, message, time.monotonic() - slot.started)
        result["worker"] = dict(pid=slot.proc.pid, lost=True)
        return self._settle(job, result, on_result)

    def _salvage(self, job: dict, partial: dict, cause: str, message: str, elapsed: float) -> dict:
        """The finished exercises' results, and the reason for the rest (of the part, for a part)."""
        exercises = {}
        wanted = job.get("exercises")
        for ex in self.config["exercises"]:
            if wanted is not None and ex["name"] not in wanted:
                continue
            name = ex["name"]
            exercises[name] = partial.get(name) or not_run(
                name, scheme=self.scheme, max_points=ex["max_points"], cause=cause, message=message,
                seed=derive_seed(self.config["run_seed"], job["id"], name))
        result = dict(id=job["id"], source=os.path.basename(job["source"]), fingerprint=job["fingerprint"],
                      status="graded", notes=[message], exercises=exercises, duration=round(elapsed, 3))
        return finish(result, {e["name"]: e["max_points"] for e in self.config["exercises"]
                               if wanted is None or e["name"] in wanted})


def split(todo: list[dict], jobs: int, exercises: list[str]) -> list[dict]:
    """The work list: each submission whole, or, with at least twice as many workers as
    submissions, one part per exercise. The workers take the parts in course order as they
    come free, so a worker held by a heavy exercise is not also left with a fixed share of
    the rest."""
    if jobs // max(1, len(todo)) < 2 or len(exercises) < 2:
        return list(todo)
    return [{**job, "exercises": [name], "part": [k, len(exercises)]} for job in todo
            for k, name in enumerate(exercises)]


def join(parts: list[dict], exercises: list[dict]) -> dict:
    """One submission's result from the results of its parts: its exercises in course order,
    every note once, and the worker entries of the parts folded into one (`pids`: each part's
    worker, in the order the parts came in; no `pid`, as no one worker graded it). Its duration is the
    pool's to set: the parts ran side by side, so none of theirs is the submission's."""
    first = parts[0]
    found = {}
    for part in parts:
        found.update(part["exercises"])
    notes = []
    for part in parts:
        notes += [n for n in part["notes"] if n not in notes]
    # Every part looked at the same hand-in (an unreadable archive, no exercise file): the same status.
    status = next((p["status"] for p in parts if p["status"] != "graded"), "graded")
    result = dict(first, exercises={e["name"]: found[e["name"]] for e in exercises if e["name"] in found},
                  notes=notes, status=status)
    workers = [p["worker"] for p in parts if isinstance(p.get("worker"), dict)]
    if workers:
        # No one worker graded it: the entry names every part's worker (a lost part's too: its
        # exercises were recorded for that worker's end), never one of them as the submission's.
        pids = [w["pid"] for w in workers if isinstance(w.get("pid"), int)]
        worker = dict(parts=len(parts), pids=sorted(set(pids), key=pids.index))
        for key in ("rss_mb", "peak_mb"):
            values = [w[key] for w in workers if isinstance(w.get(key), (int, float))]
            if values:
                worker[key] = max(values)
        children = [w["children"] for w in workers if isinstance(w.get("children"), dict)]
        if children:
            worker["children"] = {k: sum(c.get(k, 0) for c in children) for k in children[0]}
        result["worker"] = worker
    return finish(result, {e["name"]: e["max_points"] for e in exercises})
