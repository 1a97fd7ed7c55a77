"""Another correct titanic_dataset: lazy per-item conversion, a pytree collate
(the JAX docs' `numpy_collate`), and an in-place shuffle of an index array."""

from __future__ import annotations

import jax
import numpy as np
from torch.utils.data import Dataset


class TitanicDataset(Dataset):
    def __init__(self, features, labels):
        self.rows = list(np.asarray(features))
        self.targets = list(np.asarray(labels).ravel())

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, index):
        return (
            np.array(self.rows[index], dtype=np.float32),
            np.array([self.targets[index]], dtype=np.float32),
        )


def numpy_collate(batch):
    return tuple(jax.tree.map(lambda *leaves: np.stack(leaves), *batch))


def numpy_batches(features, labels, batch_size, seed):
    x = np.asarray(features, dtype=np.float32)
    y = np.asarray(labels, dtype=np.float32)[:, None]
    idx = np.arange(len(x))
    np.random.default_rng(seed).shuffle(idx)
    n_batches = -(-len(idx) // batch_size)
    chunks = [idx[i * batch_size:(i + 1) * batch_size] for i in range(n_batches)]
    return [(x[c], y[c]) for c in chunks]
