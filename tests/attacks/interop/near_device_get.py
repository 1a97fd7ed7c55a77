"""Near miss: jax_to_numpy with jax.device_get, which hands back a read-only array."""
import jax, torch
def torch_to_jax(t): return jax.dlpack.from_dlpack(t.detach())
def jax_to_torch(x): return torch.from_dlpack(x)
def jax_to_numpy(x): return jax.device_get(x)
MESSAGE = r"read-only NumPy array"
