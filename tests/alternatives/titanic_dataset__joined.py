"""Another correct titanic_dataset: features and label kept in one float32
table, a collate that concatenates and splits, and batches from np.array_split
over a shuffled table (an order from a seeded choice without replacement)."""

from __future__ import annotations

import numpy as np
from torch.utils.data import Dataset


class TitanicDataset(Dataset):
    def __init__(self, features, labels):
        features = np.asarray(features, dtype=np.float32)
        labels = np.asarray(labels, dtype=np.float32).reshape(-1, 1)
        self.table = np.concatenate([features, labels], axis=1)

    def __len__(self):
        return self.table.shape[0]

    def __getitem__(self, index):
        row = self.table[index]
        return row[:-1].copy(), row[-1:].copy()


def numpy_collate(batch):
    joined = np.stack([np.concatenate([x, y]) for x, y in batch]).astype(np.float32)
    return joined[:, :-1], joined[:, -1:]


def numpy_batches(features, labels, batch_size, seed):
    ds = TitanicDataset(features, labels)
    n = len(ds)
    order = np.random.default_rng(seed).choice(n, size=n, replace=False)
    table = ds.table[order]
    splits = np.array_split(table, range(batch_size, n, batch_size))
    return [(part[:, :-1], part[:, -1:]) for part in splits]
