"""Near miss: numpy_batches shuffles the order of the full batches but keeps each batch a block of consecutive rows."""
import numpy as np
from torch.utils.data import Dataset
class TitanicDataset(Dataset):
    def __init__(self, features, labels):
        self.features = np.asarray(features, dtype=np.float32)
        self.labels = np.asarray(labels, dtype=np.float32).reshape(-1, 1)
    def __len__(self): return len(self.features)
    def __getitem__(self, i): return self.features[i], self.labels[i]
def numpy_collate(batch):
    xs, ys = zip(*batch)
    return np.stack(xs), np.stack(ys)
def numpy_batches(features, labels, batch_size, seed):
    x = np.asarray(features, np.float32); y = np.asarray(labels, np.float32).reshape(-1, 1)
    full = np.arange(0, len(x) - batch_size + 1, batch_size)
    starts = list(np.random.default_rng(seed).permutation(full)) + list(range(len(full) * batch_size, len(x), batch_size))
    return [(x[s:s + batch_size], y[s:s + batch_size]) for s in starts]
MESSAGE = r"every batch holds \d+ consecutive rows|rows come in their original order"
