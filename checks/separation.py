"""THEORY-1342: for a fixed input, what a head selects (its pattern, from W_Q and W_K) and what
it transports (its values, through W_V and W_O) are separate factors; the separation holds
only with the input.

Measured on a random model in float64, at one head (``layer``, ``head``):

- the attention layer's output, taken from the forward pass (the residual stream after the
  layer minus before it), against ``sum_h A^h X W_V^h W_O^h`` computed here from each head's
  pattern and the layer's input ``X`` (``layer_output_error``; biases or layer norm make it
  miss, which is what the controls show);
- perturbing the head's own W_V and W_O leaves its pattern bit-for-bit unchanged
  (``pattern_shift_ov``) while its output moves (``output_shift_ov``); both are observations:
  the forward pass computes the pattern before the values, so the first cannot fail here;
- the gauge changes ``(W_Q R, W_K R^-T)`` and ``(W_V R, R^-1 W_O)``, with the biases
  ``b_Q``, ``b_K``, ``b_V`` changed with them, leave the pattern and the output unchanged
  (``qk_gauge_error``, ``ov_gauge_error``): the pattern depends on the query and key sides
  only through their product, the output on the value and output sides only through
  theirs. Their nulls (``*_gauge_error_null``) change the basis of one side only, which
  moves the product: what the errors would be if the separation did not hold;
- perturbing the OV circuits of every other head moves the head's pattern when earlier layers
  are among them (``pattern_shift_other_ov``): their outputs are the head's input.

``perturb_layer`` moves the "own OV" perturbation to every head of an earlier layer (a control:
the head's input changes, so its pattern must move).
"""

from __future__ import annotations

from typing import TypedDict

import torch
from torch import Tensor

from checks.model import AttnOnlyTransformer, ModelConfig, ModelOutput
from recordtool import CheckContext

Heads = list[tuple[int, int]]


class SeparationMetrics(TypedDict):
    layer_output_error: float
    pattern_shift_ov: float
    output_shift_ov: float
    pattern_shift_qk: float
    output_shift_qk: float
    pattern_shift_other_ov: float
    qk_gauge_error: float
    ov_gauge_error: float
    qk_gauge_error_null: float
    ov_gauge_error_null: float
    output_scale: float


def _random_invertible(d: int, generator: torch.Generator, dtype: torch.dtype) -> Tensor:
    """A well-conditioned random (d, d) matrix: orthogonal times a diagonal in [e^-0.5, e^0.5]."""
    q: Tensor = torch.linalg.qr(torch.randn(d, d, generator=generator, dtype=dtype))[0]
    diagonal: Tensor = torch.diag(torch.exp(torch.rand(d, generator=generator, dtype=dtype) - 0.5))
    product: Tensor = q @ diagonal
    return product


def _copy(model: AttnOnlyTransformer) -> AttnOnlyTransformer:
    copy = AttnOnlyTransformer(model.config, generator=torch.Generator())
    copy.load_state_dict(model.state_dict())
    return copy


def _gauged(model: AttnOnlyTransformer, layer: int, head: int, R: Tensor, S: Tensor) -> AttnOnlyTransformer:
    """A copy of ``model`` with the head's query and value sides in the basis ``R`` and its key
    and output sides in ``S``: ``(W_Q R, W_K S^-T)``, ``(W_V R, S^-1 W_O)``, and the biases
    ``b_Q R``, ``b_K S^-T``, ``b_V R`` with them (queries, keys and values are affine maps of
    the input; ``b_O`` is added after the heads and stays). With ``S = R`` this is a gauge
    change, which leaves ``W_Q W_K^T``, ``W_V W_O``, the scores and the output as they were;
    with ``S = I`` it is not (the null)."""
    gauged = _copy(model)
    g = gauged.attention(layer)
    key_side, out_side = torch.linalg.inv(S).T, torch.linalg.inv(S)
    with torch.no_grad():
        g.W_Q[head] = g.W_Q[head] @ R
        g.W_K[head] = g.W_K[head] @ key_side
        g.W_V[head] = g.W_V[head] @ R
        g.W_O[head] = out_side @ g.W_O[head]
        for bias, basis in ((g.b_Q, R), (g.b_K, key_side), (g.b_V, R)):
            if bias is not None:
                bias[head] = bias[head] @ basis
    return gauged


def _layer_output_error(model: AttnOnlyTransformer, base: ModelOutput, layer: int) -> float:
    """The layer's output from the forward pass (the stream after it minus before it) against
    ``sum_h A^h X W_V^h W_O^h``, relative to the output's largest entry."""
    X = base.residuals[layer]  # (batch, pos, d_model): the stream entering the layer
    layer_output = base.residuals[layer + 1] - X  # (batch, pos, d_model)
    attn = model.attention(layer)
    with torch.no_grad():
        by_formula = sum(
            (base.patterns[layer][:, h] @ (X @ attn.W_V[h]) @ attn.W_O[h] for h in range(model.config.n_heads)),
            torch.zeros_like(X),
        )  # (batch, pos, d_model)
    return float((layer_output - by_formula).abs().max()) / float(layer_output.abs().max())


def _perturbed(model: AttnOnlyTransformer, names: tuple[str, ...], heads: Heads, epsilon: float,
               gen: torch.Generator) -> AttnOnlyTransformer:
    """A copy of ``model`` with the weights ``names`` of ``heads`` moved by ``epsilon`` times
    their spread, in random directions drawn from ``gen``."""
    copy = _copy(model)
    with torch.no_grad():
        for at_layer, h in heads:
            block = copy.attention(at_layer)
            for name in names:
                W: Tensor = getattr(block, name)
                W[h] += epsilon * W[h].std() * torch.randn(W[h].shape, generator=gen, dtype=W.dtype)
    return copy


def _perturbed_heads(config: ModelConfig, layer: int, head: int, perturb_layer: int | None) -> tuple[Heads, Heads]:
    """The heads whose OV circuits the two OV perturbations change: the head's "own" (itself,
    or every head of ``perturb_layer``), and every other head of the model."""
    ov_layer = layer if perturb_layer is None else perturb_layer
    own = [(layer, head)] if ov_layer == layer else [(ov_layer, h) for h in range(config.n_heads)]
    others = [(lay, h) for lay in range(config.n_layers) for h in range(config.n_heads) if (lay, h) != (layer, head)]
    return own, others


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
    biases: bool = False,
    layer_norm: bool = False,
    dtype: str = "float64",
    init_std: float = 0.2,
    epsilon: float = 0.1,
    batch: int = 4,
) -> SeparationMetrics:
    """Pattern/output separation at head (``layer``, ``head``) of a random model.

    perturb_layer: whose OV circuit the "OV perturbation" changes; by default the head's own
                   (only the head itself is perturbed); an earlier layer (all its heads) for
                   the control
    biases, layer_norm: switch them on in the model (controls)
    """
    torch.set_num_threads(ctx.threads)
    config = ModelConfig(n_layers=n_layers, dtype=dtype, init_std=init_std, biases=biases,
                         layer_norm=layer_norm)
    model = AttnOnlyTransformer(config, generator=torch.Generator().manual_seed(ctx.seed))
    gen = torch.Generator().manual_seed(ctx.seed + 1)
    tokens = torch.randint(0, config.d_vocab, (batch, config.n_ctx), generator=gen)
    with torch.no_grad():
        base = model(tokens, per_head=True)
    A = base.patterns[layer][:, head]  # (batch, query_pos, key_pos)
    out = base.head_outputs[layer][:, head]  # (batch, pos, d_model)
    scale = float(out.abs().max())


    def perturbed(names: tuple[str, ...], heads: Heads) -> tuple[Tensor, Tensor]:
        return _head(_perturbed(model, names, heads, epsilon, gen), tokens, layer, head)

    own, others = _perturbed_heads(config, layer, head, perturb_layer)
    A_ov, out_ov = perturbed(("W_V", "W_O"), own)
    A_qk, out_qk = perturbed(("W_Q", "W_K"), [(layer, head)])
    A_other, _ = perturbed(("W_V", "W_O"), others)

    R = _random_invertible(config.d_head, gen, config.torch_dtype)
    A_g, out_g = _head(_gauged(model, layer, head, R, R), tokens, layer, head)
    # the null: the same change of basis on one side only, which moves W_Q W_K^T and W_V W_O
    A_n, out_n = _head(_gauged(model, layer, head, R, torch.eye(config.d_head, dtype=R.dtype)), tokens, layer, head)

    return {
        "layer_output_error": _layer_output_error(model, base, layer),
        "pattern_shift_ov": float((A_ov - A).abs().max()),
        "output_shift_ov": float((out_ov - out).abs().max()) / scale,
        "pattern_shift_qk": float((A_qk - A).abs().max()),
        "output_shift_qk": float((out_qk - out).abs().max()) / scale,
        "pattern_shift_other_ov": float((A_other - A).abs().max()),
        "qk_gauge_error": float((A_g - A).abs().max()),
        "ov_gauge_error": float((out_g - out).abs().max()) / scale,
        "qk_gauge_error_null": float((A_n - A).abs().max()),
        "ov_gauge_error_null": float((out_n - out).abs().max()) / scale,
        "output_scale": scale,
    }
