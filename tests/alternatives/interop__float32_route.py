"""Alternative: bfloat16 routed through float32 (exact), everything else through NumPy."""
import jax, jax.numpy as jnp, numpy as np, torch
def torch_to_jax(t):
    t = t.detach().cpu()
    if t.dtype == torch.bfloat16:
        return jnp.asarray(t.float().numpy()).astype(jnp.bfloat16)
    return jnp.array(t.numpy())
def jax_to_torch(x):
    if x.dtype == jnp.bfloat16:
        return torch.from_numpy(np.asarray(x.astype(jnp.float32)).copy()).to(torch.bfloat16)
    return torch.tensor(np.asarray(x))
def jax_to_numpy(x):
    return np.array(x, copy=True)
