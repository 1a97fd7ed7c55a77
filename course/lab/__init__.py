"""The training lab: the article's Titanic model trained several ways and timed honestly.

`course.lab.api` is the entry point for every front end (the `jaxlings train`
command and the course app). Nothing in this package imports a UI toolkit, and
torch/jax are imported only when a run needs them.
"""
