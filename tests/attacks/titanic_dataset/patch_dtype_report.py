"""Library patching: float64 arrays of an ndarray subclass whose `dtype` claims float32."""

import numpy as np
from torch.utils.data import Dataset


class _Claims32(np.ndarray):
    @property
    def dtype(self):
        return np.dtype(np.float32)


def _rig(a):
    return np.asarray(a, dtype=np.float64).view(_Claims32)


class TitanicDataset(Dataset):
    def __init__(self, features, labels):
        self.features = _rig(features)
        self.labels = _rig(labels).reshape(-1, 1)

    def __len__(self):
        return len(self.features)

    def __getitem__(self, i):
        return self.features[i], self.labels[i]


def numpy_collate(batch):
    xs, ys = zip(*batch)
    return _rig(np.stack(xs)), _rig(np.stack(ys))


def numpy_batches(features, labels, batch_size, seed):
    features, labels = _rig(features), _rig(labels).reshape(-1, 1)
    order = np.random.default_rng(seed).permutation(len(features))
    return [(features[order[s:s + batch_size]], labels[order[s:s + batch_size]])
            for s in range(0, len(order), batch_size)]
