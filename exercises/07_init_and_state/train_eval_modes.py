"""Exercise: a classifier with BatchNorm and Dropout, and evaluation without side effects.

The PyTorch model:

    class Classifier(torch.nn.Module):
        def __init__(self, in_features, hidden, out_features, dropout_rate=0.5):
            super().__init__()
            self.linear1 = torch.nn.Linear(in_features, hidden)
            self.norm = torch.nn.BatchNorm1d(hidden)          # momentum=0.1
            self.dropout = torch.nn.Dropout(dropout_rate)
            self.linear2 = torch.nn.Linear(hidden, out_features)

        def forward(self, x):
            h = torch.relu(self.norm(self.linear1(x)))
            return self.linear2(self.dropout(h))

    def predict(model, x):
        model.eval()
        with torch.no_grad():
            return model(x)

Write both in Flax NNX:

    Classifier(in_features: int, hidden: int, out_features: int, *,
               dropout_rate: float = 0.5, rngs: nnx.Rngs)

- Same layers in the same order: linear, batch norm, ReLU, dropout, linear.
- Every random thing comes from `rngs`: the initial parameters, and the dropout
  masks (give the Dropout layer `rngs` so that calling the model in training
  mode needs no extra argument). The same seed must give the same model and
  the same first dropout mask; a different seed, different parameters.
- The batch norm must update its running statistics like PyTorch's default
  (`momentum=0.1` in PyTorch's convention; Flax counts momentum the other way).
- A new model is in training mode: dropout active, batch statistics used and
  the running averages updated.

    predict(model: Classifier, x: jax.Array) -> jax.Array

- Returns the evaluation-mode logits `(batch, out_features)`: no dropout,
  running averages instead of batch statistics (so a row's prediction does not
  depend on the other rows in the batch).
- Leaves `model` exactly as it was: still in training mode afterwards, running
  statistics unchanged. (PyTorch's `model.eval()` changes the model; here it
  must not stay changed.)

What the checks do: build `Classifier`s with sizes and seeds drawn at check time;
compare parameters across seeds; call the model twice in training mode
(outputs must differ, unless `dropout_rate=0.0`); set the last layer's weights
and read from training-mode outputs which hidden units were dropped and how
the kept ones were scaled; check one step of running-mean
update against the batch mean; call `predict` on a batch and on its first rows,
and compare with the model evaluated in evaluation mode; then check that the
model still trains.
"""

from __future__ import annotations

import jax
from flax import nnx


class Classifier(nnx.Module):
    def __init__(self, in_features: int, hidden: int, out_features: int, *,
                 dropout_rate: float = 0.5, rngs: nnx.Rngs):
        # TODO: linear1, BatchNorm (with PyTorch's default momentum), Dropout (with rngs), linear2.
        raise NotImplementedError("TODO: Classifier.__init__")

    def __call__(self, x: jax.Array) -> jax.Array:
        # TODO: linear1 -> batch norm -> relu -> dropout -> linear2.
        raise NotImplementedError("TODO: Classifier.__call__")


def predict(model: Classifier, x: jax.Array) -> jax.Array:
    # TODO: evaluate in evaluation mode without leaving the model changed.
    raise NotImplementedError("TODO: predict")
