"""Near miss: labels come out with shape (n,) instead of (n, 1)."""

import numpy as np
from torch.utils.data import Dataset

MESSAGE = r"shape"


class TitanicDataset(Dataset):
    def __init__(self, features, labels):
        self.features = np.asarray(features, dtype=np.float32)
        self.labels = np.asarray(labels, dtype=np.float32)

    def __len__(self):
        return len(self.features)

    def __getitem__(self, i):
        return self.features[i], self.labels[i:i + 1].reshape(())


def numpy_collate(batch):
    xs, ys = zip(*batch)
    return np.stack(xs), np.stack(ys)


def numpy_batches(features, labels, batch_size, seed):
    features = np.asarray(features, dtype=np.float32)
    labels = np.asarray(labels, dtype=np.float32)
    order = np.random.default_rng(seed).permutation(len(features))
    return [(features[order[s:s + batch_size]], labels[order[s:s + batch_size]])
            for s in range(0, len(order), batch_size)]
