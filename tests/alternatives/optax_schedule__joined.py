"""optax_schedule from optax.join_schedules (a linear warm-up, then a cosine decay
over the remaining steps) and inject_hyperparams around Adam."""

import optax


def make_schedule(peak_lr, warmup_steps, total_steps):
    return optax.join_schedules(
        [optax.linear_schedule(0.0, peak_lr, warmup_steps),
         optax.cosine_decay_schedule(peak_lr, total_steps - warmup_steps, alpha=0.0)],
        boundaries=[warmup_steps],
    )


def make_tx(peak_lr, warmup_steps, total_steps, max_norm):
    adam = optax.inject_hyperparams(optax.adam)(learning_rate=make_schedule(peak_lr, warmup_steps, total_steps))
    return optax.chain(optax.clip_by_global_norm(max_norm), adam)
