"""The article's data path: a PyTorch `Dataset` and `DataLoader` that hand NumPy to JAX.

PyTorch's loader is a good batching and shuffling tool even when the model is
written in JAX; the only change is a `collate_fn` that stacks NumPy arrays
instead of building torch tensors, because JAX takes NumPy directly and a torch
tensor would need a copy. `make_loader(..., to_torch=True)` gives the plain
PyTorch batches the torch model trains on.
"""

from __future__ import annotations

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

from course.titanic import TitanicSplit


class TitanicDataset(Dataset):
    """One passenger per item: `(features float32 (9,), label float32 ())` as NumPy."""

    def __init__(self, split: TitanicSplit, *, train: bool = True):
        self.x = split.x_train if train else split.x_test
        self.y = split.y_train if train else split.y_test

    def __len__(self) -> int:
        return len(self.y)

    def __getitem__(self, index: int) -> tuple[np.ndarray, np.ndarray]:
        return self.x[index], self.y[index]


def numpy_collate(batch: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """Stack a list of `(x, y)` items into `(x (b, 9), y (b,))` NumPy arrays for JAX."""
    xs, ys = zip(*batch)
    return np.stack(xs), np.stack(ys)


def torch_collate(batch: list[tuple[np.ndarray, np.ndarray]]) -> tuple[torch.Tensor, torch.Tensor]:
    x, y = numpy_collate(batch)
    return torch.from_numpy(x), torch.from_numpy(y)


def make_loader(
    split: TitanicSplit,
    batch_size: int = 32,
    shuffle: bool = True,
    seed: int = 0,
    *,
    train: bool = True,
    drop_last: bool = True,
    to_torch: bool = False,
) -> DataLoader:
    """A seeded `DataLoader` over the training (or test) passengers.

    `drop_last=True` by default: 891 passengers make 27 batches of 32 and one of
    27, and under `jit` that last, smaller batch is a new shape that compiles the
    step a second time. Dropping it keeps one shape; the loader reshuffles every
    epoch, so a different handful of passengers sits out each time.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    generator = torch.Generator().manual_seed(seed)
    return DataLoader(
        TitanicDataset(split, train=train),
        batch_size=batch_size,
        shuffle=shuffle,
        drop_last=drop_last,
        generator=generator,
        collate_fn=torch_collate if to_torch else numpy_collate,
    )
