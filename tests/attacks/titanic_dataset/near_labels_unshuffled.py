"""Near miss: the labels are not reordered with the features."""
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
    order = np.random.default_rng(seed).permutation(len(x))
    x = x[order]
    return [(x[s:s + batch_size], y[s:s + batch_size]) for s in range(0, len(x), batch_size)]
MESSAGE = r"each label must stay with its row"
