"""What float32 really means on this machine: matmul and convolution precision, JAX beside PyTorch.

On CPUs a float32 matmul is computed in float32. On NVIDIA GPUs since Ampere both libraries may
round the inputs to TensorFloat-32 (10-bit mantissa) unless told otherwise: JAX's default
precision for float32 dots and convolutions does, PyTorch's matmul does not by default
(`torch.backends.cuda.matmul.allow_tf32` is False) but its cuDNN convolutions do
(`torch.backends.cudnn.allow_tf32` is True). This prints the relative error of each setting
against a float64 reference computed here in NumPy, and the difference between a JAX and a
PyTorch computation of the same layer: the number a port's comparison must tolerate.

    python benchmarks/precision_defaults.py [--size 1024] [--json out.json]

It prints measurements, not verdicts: the lessons quote what it printed on the hardware named.
"""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np


def rel_err(got, want) -> float:
    got = np.asarray(got, dtype=np.float64)
    return float(np.max(np.abs(got - want)) / np.max(np.abs(want)))


def conv_nhwc_reference(x: np.ndarray, k: np.ndarray) -> np.ndarray:
    """'SAME'-free (VALID) stride-1 convolution in float64: x (N,H,W,C), k (KH,KW,C,O)."""
    kh, kw = k.shape[:2]
    n, h, w, _ = x.shape
    out = np.zeros((n, h - kh + 1, w - kw + 1, k.shape[3]))
    for i in range(kh):
        for j in range(kw):
            out += np.einsum("nhwc,co->nhwo", x[:, i:i + h - kh + 1, j:j + w - kw + 1, :], k[i, j])
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1024, help="matmul size n (n×n @ n×n)")
    parser.add_argument("--json", metavar="PATH")
    args = parser.parse_args(argv)

    import jax
    import jax.numpy as jnp
    import torch

    rng = np.random.default_rng(0)
    n = args.size
    a = rng.standard_normal((n, n)).astype(np.float32)
    b = rng.standard_normal((n, n)).astype(np.float32)
    want = a.astype(np.float64) @ b.astype(np.float64)
    x = rng.standard_normal((8, 32, 32, 64)).astype(np.float32)
    k = (rng.standard_normal((3, 3, 64, 64)) / 24).astype(np.float32)
    want_conv = conv_nhwc_reference(x.astype(np.float64), k.astype(np.float64))

    jax_device = jax.devices()[0]
    torch_device = "cuda" if torch.cuda.is_available() else "cpu"
    rows: list[tuple[str, str, float]] = []

    def jax_mm(precision=None):
        f = jax.jit(lambda p, q: jnp.matmul(p, q, precision=precision))
        return np.asarray(f(jnp.asarray(a), jnp.asarray(b)))

    def jax_conv(precision=None):
        f = jax.jit(lambda p, q: jax.lax.conv_general_dilated(
            p, q, (1, 1), "VALID", dimension_numbers=("NHWC", "HWIO", "NHWC"), precision=precision))
        return np.asarray(f(jnp.asarray(x), jnp.asarray(k)))

    rows.append(("jax matmul", "default", rel_err(jax_mm(), want)))
    rows.append(("jax matmul", "precision='highest'", rel_err(jax_mm("highest"), want)))
    with jax.default_matmul_precision("float32"):
        rows.append(("jax matmul", "default_matmul_precision('float32')", rel_err(jax_mm(), want)))
    rows.append(("jax conv", "default", rel_err(jax_conv(), want_conv)))
    rows.append(("jax conv", "precision='highest'", rel_err(jax_conv("highest"), want_conv)))

    ta, tb = torch.from_numpy(a).to(torch_device), torch.from_numpy(b).to(torch_device)
    tx = torch.from_numpy(x).permute(0, 3, 1, 2).contiguous().to(torch_device)      # NCHW
    tk = torch.from_numpy(k).permute(3, 2, 0, 1).contiguous().to(torch_device)      # OIHW
    defaults = {
        "torch.get_float32_matmul_precision()": torch.get_float32_matmul_precision(),
        "torch.backends.cuda.matmul.allow_tf32": bool(torch.backends.cuda.matmul.allow_tf32),
        "torch.backends.cudnn.allow_tf32": bool(torch.backends.cudnn.allow_tf32),
    }

    def torch_conv():
        with torch.no_grad():
            return torch.nn.functional.conv2d(tx, tk).permute(0, 2, 3, 1).cpu().numpy()

    rows.append(("torch matmul", "default", rel_err((ta @ tb).cpu().numpy(), want)))
    previous = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("high")
    rows.append(("torch matmul", "set_float32_matmul_precision('high')", rel_err((ta @ tb).cpu().numpy(), want)))
    torch.set_float32_matmul_precision(previous)
    rows.append(("torch conv", "default", rel_err(torch_conv(), want_conv)))
    cudnn_tf32 = torch.backends.cudnn.allow_tf32
    torch.backends.cudnn.allow_tf32 = False
    rows.append(("torch conv", "cudnn.allow_tf32 = False", rel_err(torch_conv(), want_conv)))
    torch.backends.cudnn.allow_tf32 = cudnn_tf32

    # The number a port's comparison sees: the same layer in JAX and in PyTorch, both at defaults.
    port_mm = float(np.max(np.abs(jax_mm() - (ta @ tb).cpu().numpy())) / np.max(np.abs(want)))
    port_conv = float(np.max(np.abs(jax_conv() - torch_conv())) / np.max(np.abs(want_conv)))

    name = f"{jax_device.platform}: {getattr(jax_device, 'device_kind', '?')}"
    tname = torch.cuda.get_device_name(0) if torch_device == "cuda" else "cpu"
    print(f"JAX {jax.__version__} on {name}; PyTorch {torch.__version__} on {tname}")
    for key, value in defaults.items():
        print(f"  {key} = {value}")
    print(f"\n{'computation':<14}{'setting':<40}{'max rel. error vs float64':>26}")
    for what, setting, err in rows:
        print(f"{what:<14}{setting:<40}{err:>26.2e}")
    print(f"\nJAX vs PyTorch at defaults, max diff / max |value|: matmul {port_mm:.2e}, conv {port_conv:.2e}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"jax": jax.__version__, "torch": torch.__version__, "jax_device": name,
                       "torch_device": tname, "defaults": defaults, "size": n,
                       "rows": [{"computation": w, "setting": s, "rel_error": e} for w, s, e in rows],
                       "jax_vs_torch": {"matmul": port_mm, "conv": port_conv}}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
