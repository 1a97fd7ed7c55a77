"""Alternative: tensors stored in the dataset, default_collate turned into NumPy, an index shuffle with rng.shuffle."""
import numpy as np, torch
from torch.utils.data import Dataset, default_collate
class TitanicDataset(Dataset):
    def __init__(self, features, labels):
        self.x = torch.as_tensor(np.asarray(features), dtype=torch.float32)
        self.y = torch.as_tensor(np.asarray(labels), dtype=torch.float32).unsqueeze(1)
    def __len__(self): return self.x.shape[0]
    def __getitem__(self, index): return self.x[index].numpy(), self.y[index].numpy()
def numpy_collate(batch):
    x, y = default_collate(batch)
    return x.numpy(), y.numpy()
def numpy_batches(features, labels, batch_size, seed):
    x = np.array(features, dtype=np.float32); y = np.array(labels, dtype=np.float32)[:, None]
    idx = np.arange(len(x)); np.random.default_rng(seed).shuffle(idx)
    return [(x[idx[i:i + batch_size]], y[idx[i:i + batch_size]]) for i in range(0, len(idx), batch_size)]
