"""jaxlings: a terminal course from PyTorch to JAX, Flax and Optax."""

__version__ = "0.1.0"
