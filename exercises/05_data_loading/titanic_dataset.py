"""Exercise: feed the Titanic data to JAX through a PyTorch DataLoader.

JAX has no data loader of its own. The usual path, and the one this course
follows, keeps PyTorch's `Dataset`/`DataLoader` for shuffling and batching and
swaps the default `collate_fn` (which builds `torch.Tensor`s) for one that
builds NumPy arrays, the format every JAX function accepts.

Write three things.

1. `TitanicDataset(features, labels)`, a `torch.utils.data.Dataset`:
   - `features`: array-like of shape `(n, n_features)`; `labels`: array-like of
     shape `(n,)` holding 0/1. Store both as NumPy `float32` arrays (convert in
     `__init__`; the inputs may be float64 or int).
   - `len(ds)` is `n`.
   - `ds[i]` returns the tuple `(x_i, y_i)` of NumPy `float32` arrays with
     shapes `(n_features,)` and `(1,)` (the label as a one-element vector, so
     that a batch of labels has the model output's shape `(batch, 1)`).
   PyTorch equivalent: the same class, but returning tensors.

2. `numpy_collate(batch)`: the `collate_fn`. `batch` is a list of `ds[i]`
   tuples. Return the tuple `(x, y)` of NumPy `float32` arrays with shapes
   `(len(batch), n_features)` and `(len(batch), 1)`, rows in the order given.
   PyTorch equivalent: `torch.utils.data.default_collate`, which returns tensors.

3. `numpy_batches(features, labels, batch_size, seed)`: batching without
   PyTorch. Return a list of `(x, y)` batches (same dtypes and shapes as
   `numpy_collate` gives) that visits every row exactly once in an order shuffled
   by `np.random.default_rng(seed)`; all batches have `batch_size` rows except
   possibly the last, which holds the remainder (like `drop_last=False`). The
   same seed must give the same order.

What the checks do: build a `DataLoader(TitanicDataset(...), batch_size=...,
shuffle=True, generator=torch.Generator().manual_seed(seed),
collate_fn=numpy_collate)` on random data of varied sizes and compare its
batches with the reference's (types, shapes, dtypes, values); call
`numpy_batches` and check that it is a seeded, complete, aligned shuffle
that leaves its input arrays and NumPy's global random state as they were.
"""

from __future__ import annotations

import numpy as np
from torch.utils.data import Dataset


class TitanicDataset(Dataset):
    def __init__(self, features, labels):
        # TODO: store features and labels as float32 NumPy arrays.
        raise NotImplementedError("TODO: TitanicDataset.__init__")

    def __len__(self) -> int:
        # TODO: the number of passengers.
        raise NotImplementedError("TODO: TitanicDataset.__len__")

    def __getitem__(self, index: int) -> tuple[np.ndarray, np.ndarray]:
        # TODO: one passenger as (features (n_features,), label (1,)), both float32.
        raise NotImplementedError("TODO: TitanicDataset.__getitem__")


def numpy_collate(batch: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    # TODO: stack the samples into NumPy arrays (batch, n_features) and (batch, 1).
    raise NotImplementedError("TODO: numpy_collate")


def numpy_batches(features, labels, batch_size: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    # TODO: shuffle the row indices with np.random.default_rng(seed), then slice them into batches.
    raise NotImplementedError("TODO: numpy_batches")
