"""Near miss: the dataset keeps the features as float64 (pandas' dtype) instead of converting to float32."""

import numpy as np
from torch.utils.data import Dataset

MESSAGE = r"float64"


class TitanicDataset(Dataset):
    def __init__(self, features, labels):
        self.features = np.asarray(features)
        self.labels = np.asarray(labels, dtype=np.float32).reshape(-1, 1)

    def __len__(self):
        return len(self.features)

    def __getitem__(self, i):
        return self.features[i], self.labels[i]


def numpy_collate(batch):
    xs, ys = zip(*batch)
    return np.stack(xs), np.stack(ys)


def numpy_batches(features, labels, batch_size, seed):
    features = np.asarray(features)
    labels = np.asarray(labels, dtype=np.float32).reshape(-1, 1)
    order = np.random.default_rng(seed).permutation(len(features))
    return [(features[order[s:s + batch_size]], labels[order[s:s + batch_size]])
            for s in range(0, len(order), batch_size)]
