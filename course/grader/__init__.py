"""`jaxlings grade`: grade a class of submissions with the course's hidden checks.

The grader is the trusted side: it discovers submissions, copies each into a
throw-away folder, runs the check engine (`course.engine.runner`) in a pool of
long-lived worker processes whose learner children are sandboxed, and writes
the results in the formats graders already use (JSON, CSV, JUnit XML,
Gradescope's results.json, per-learner feedback).
"""
