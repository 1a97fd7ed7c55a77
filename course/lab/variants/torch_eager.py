"""The PyTorch baseline: an `nn.Module` trained in the usual eager loop over a DataLoader."""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from course.lab.context import TrainContext
from course.lab.torch_data import make_loader


class MLP(nn.Module):
    def __init__(self, n_in: int, hidden: int):
        super().__init__()
        self.hidden = nn.Linear(n_in, hidden)
        self.out = nn.Linear(hidden, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(torch.relu(self.hidden(x))).squeeze(-1)


# Why one thread on CPU: the lab runs PyTorch in the same process as JAX, whose
# CPU runtime keeps its own worker threads. On a small machine PyTorch's
# OpenMP threads then fight them for cores and each step of this tiny model
# gets ~10x slower (measured on 2 cores); one thread is also what this model
# needs standalone (within 10% of two).
CPU_THREADS = 1


def train(ctx: TrainContext) -> np.ndarray:
    if ctx.torch_device != "cpu":
        return _train(ctx)
    before = torch.get_num_threads()
    torch.set_num_threads(CPU_THREADS)
    try:
        return _train(ctx)
    finally:
        torch.set_num_threads(before)


def _train(ctx: TrainContext) -> np.ndarray:
    device = torch.device(ctx.torch_device)
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    ctx.start()
    # fork_rng: seed the initialisation without moving the caller's global torch RNG.
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(ctx.seed)
        model = MLP(ctx.split.x_train.shape[1], ctx.hidden).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=ctx.learning_rate)
    loss_fn = nn.BCEWithLogitsLoss()
    loader = make_loader(ctx.split, ctx.batch_size, shuffle=True, seed=ctx.seed, to_torch=True)
    ctx.mark_ready()
    model.train()
    for epoch in range(ctx.epochs):
        total = torch.zeros((), device=device)
        for x, y in ctx.loader_batches(loader):
            x, y = x.to(device), y.to(device)
            optimizer.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            optimizer.step()
            total += loss.detach()
            if ctx.timing.compiled is None:
                ctx.mark_compiled(sync)
        ctx.end_epoch(epoch, total.item() / ctx.steps_per_epoch)
    ctx.mark_done(sync)
    model.eval()
    with torch.no_grad():
        return model(torch.from_numpy(ctx.split.x_test).to(device)).cpu().numpy()
