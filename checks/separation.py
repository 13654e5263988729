"""THEORY-1342: for a fixed input, what a head selects (its pattern, from W_Q and W_K) and what
it transports (its values, through W_V and W_O) are separate factors.

Measured on a random two-layer model in float64, at one layer-1 head: its output is
``A (X W_V) W_O``; perturbing its W_V or W_O leaves its pattern bit-for-bit unchanged while its
output moves; perturbing W_Q or W_K moves the pattern; the gauge changes (W_Q R, W_K R^-T) and
(W_V R, R^-1 W_O) leave pattern and output unchanged. The control perturbs an earlier layer's OV
instead: the head's input changes, and with it the pattern, since the separation holds only
with the input fixed.
"""

from __future__ import annotations

import torch
from torch import Tensor

from checks.model import AttnOnlyTransformer, ModelConfig
from recordtool import CheckContext


def _random_invertible(d: int, generator: torch.Generator, dtype: torch.dtype) -> Tensor:
    """A well-conditioned random (d, d) matrix: orthogonal times a diagonal in [e^-0.5, e^0.5]."""
    q: Tensor = torch.linalg.qr(torch.randn(d, d, generator=generator, dtype=dtype))[0]
    diagonal: Tensor = torch.diag(torch.exp(torch.rand(d, generator=generator, dtype=dtype) - 0.5))
    product: Tensor = q @ diagonal
    return product


def _head(model: AttnOnlyTransformer, tokens: Tensor, layer: int, head: int) -> tuple[Tensor, Tensor]:
    """(pattern, output) of one head: (batch, query_pos, key_pos), (batch, pos, d_model)."""
    with torch.no_grad():
        out = model(tokens, per_head=True)
    return out.patterns[layer][:, head], out.head_outputs[layer][:, head]


def measure(
    ctx: CheckContext,
    *,
    n_layers: int = 2,
    layer: int = 1,
    head: int = 0,
    perturb_layer: int | None = None,
    dtype: str = "float64",
    init_std: float = 0.2,
    epsilon: float = 0.1,
    batch: int = 4,
) -> dict[str, float | int | bool | list[float]]:
    """Pattern/output separation at head (``layer``, ``head``) of a random model.

    perturb_layer: whose OV circuit the "OV perturbation" changes; by default the head's own
    (only the head itself is perturbed); an earlier layer (all its heads) for the control.
    """
    torch.set_num_threads(ctx.threads)
    torch.manual_seed(ctx.seed)
    config = ModelConfig(n_layers=n_layers, dtype=dtype, init_std=init_std)
    model = AttnOnlyTransformer(config)
    gen = torch.Generator().manual_seed(ctx.seed + 1)
    tokens = torch.randint(0, config.d_vocab, (batch, config.n_ctx), generator=gen)
    dt = config.torch_dtype

    with torch.no_grad():
        base = model(tokens, per_head=True)
    A = base.patterns[layer][:, head]  # (batch, query_pos, key_pos)
    out = base.head_outputs[layer][:, head]  # (batch, pos, d_model)
    X = base.residuals[layer]  # (batch, pos, d_model): the head's (fixed) input
    attn = model.attention(layer)
    with torch.no_grad():
        by_formula = A @ (X @ attn.W_V[head]) @ attn.W_O[head]  # (batch, pos, d_model)
    scale = float(out.abs().max())

    def perturbed(names: tuple[str, ...], at_layer: int, heads: list[int]) -> tuple[Tensor, Tensor]:
        copy = AttnOnlyTransformer(config)
        copy.load_state_dict(model.state_dict())
        block = copy.attention(at_layer)
        with torch.no_grad():
            for name in names:
                W: Tensor = getattr(block, name)
                for h in heads:
                    W[h] += epsilon * W[h].std() * torch.randn(W[h].shape, generator=gen, dtype=dt)
        return _head(copy, tokens, layer, head)

    ov_layer = layer if perturb_layer is None else perturb_layer
    ov_heads = [head] if ov_layer == layer else list(range(config.n_heads))
    A_ov, out_ov = perturbed(("W_V", "W_O"), ov_layer, ov_heads)
    A_qk, out_qk = perturbed(("W_Q", "W_K"), layer, [head])

    R = _random_invertible(config.d_head, gen, dt)
    gauged = AttnOnlyTransformer(config)
    gauged.load_state_dict(model.state_dict())
    g = gauged.attention(layer)
    with torch.no_grad():
        g.W_Q[head] = g.W_Q[head] @ R
        g.W_K[head] = g.W_K[head] @ torch.linalg.inv(R).T
        g.W_V[head] = g.W_V[head] @ R
        g.W_O[head] = torch.linalg.inv(R) @ g.W_O[head]
    A_g, out_g = _head(gauged, tokens, layer, head)

    return {
        "head_output_error": float((out - by_formula).abs().max()),
        "pattern_shift_ov": float((A_ov - A).abs().max()),
        "output_shift_ov": float((out_ov - out).abs().max()) / scale,
        "pattern_shift_qk": float((A_qk - A).abs().max()),
        "output_shift_qk": float((out_qk - out).abs().max()) / scale,
        "qk_gauge_error": float((A_g - A).abs().max()),
        "ov_gauge_error": float((out_g - out).abs().max()) / scale,
        "output_scale": scale,
    }
