"""Near miss: torch_to_jax through t.float(), so float16 and bfloat16 tensors come back as float32."""
import jax, jax.numpy as jnp, numpy as np, torch
def torch_to_jax(t):
    t = t.detach()
    return jnp.asarray(t.float().numpy() if t.is_floating_point() else t.numpy())
def jax_to_torch(x): return torch.from_dlpack(x)
def jax_to_numpy(x): return np.array(x)
MESSAGE = r"dtype: expected .float16.|dtype: expected .bfloat16."
