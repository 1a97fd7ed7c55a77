"""Near miss: numpy_batches shuffles the CALLER'S arrays in place (rng.shuffle on features, then on labels with an
equally seeded generator) when they are already float32/1-D: a second call with the same seed on the same arrays
gives another order."""
MESSAGE = r"changed the caller's x and y in place.*permutation of the\s+row indices"

import numpy as np
from torch.utils.data import Dataset


class TitanicDataset(Dataset):
    def __init__(self, features, labels):
        self.x = np.asarray(features, dtype=np.float32)
        self.y = np.asarray(labels, dtype=np.float32)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i], self.y[i:i + 1]


def numpy_collate(batch):
    xs, ys = zip(*batch)
    return np.stack(xs).astype(np.float32), np.stack(ys).astype(np.float32)


def numpy_batches(features, labels, batch_size, seed):
    x = np.asarray(features, dtype=np.float32)   # no copy when the caller already has float32
    y = np.asarray(labels, dtype=np.float32)
    np.random.default_rng(seed).shuffle(x)       # in place, like random.shuffle(list)
    np.random.default_rng(seed).shuffle(y)       # same seed, same length: same permutation
    y = y.reshape(-1, 1)
    return [(x[s:s + batch_size], y[s:s + batch_size]) for s in range(0, len(x), batch_size)]
