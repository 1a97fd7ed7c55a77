"""Solution: a Titanic Dataset, a NumPy collate_fn, and batching without PyTorch."""

from __future__ import annotations

import numpy as np
from torch.utils.data import Dataset


class TitanicDataset(Dataset):
    def __init__(self, features, labels):
        # Convert once here rather than per item: the loader calls __getitem__ per row.
        self.features = np.asarray(features, dtype=np.float32)
        self.labels = np.asarray(labels, dtype=np.float32).reshape(-1, 1)

    def __len__(self) -> int:
        return len(self.features)

    def __getitem__(self, index: int) -> tuple[np.ndarray, np.ndarray]:
        return self.features[index], self.labels[index]


def numpy_collate(batch: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    xs, ys = zip(*batch)
    return np.stack(xs), np.stack(ys)


def numpy_batches(features, labels, batch_size: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    features = np.asarray(features, dtype=np.float32)
    labels = np.asarray(labels, dtype=np.float32).reshape(-1, 1)
    order = np.random.default_rng(seed).permutation(len(features))
    return [
        (features[idx], labels[idx])
        for idx in (order[start:start + batch_size] for start in range(0, len(order), batch_size))
    ]
