"""Hand-built heads written into a trained model: the positive and negative controls of
THEORY-977's composition tests.

A test of a circuit is only worth its verdict if it finds the circuit where it is known to be
there, and rejects a look-alike. These functions write such heads into a copy of a trained
model, leaving every other weight as it was:

- ``recent_tokens``: a layer-0 head that attends evenly over the last ``window`` tokens
  (t-1 .. t-window), with the previous-token head's W_V and W_O, so that it writes what that
  head writes, averaged over recent positions, into the subspace the induction heads' keys
  already read: the layer-1 side is left as trained, and the induction heads' K-composition
  with it is measured by the same formula as with any other head. Its W_Q and W_K are fitted
  to that pattern (Adam, on the data the model trained on, every other weight fixed): a
  trained model's positions are whatever training made them, so no closed form writes a
  rank-``d_head`` positional pattern into them.
- ``previous_token``: every other layer-0 head made a copy of the previous-token head (all
  four matrices, each W_O divided by the number of heads, so that together they write what
  the one head wrote), the look-alike the audit found the old partner test passing.
- ``v_composition``: a layer-1 head whose W_V reads what the previous-token head writes
  (``W_V := W_O^prev T``, scaled to W_V's norm), so that it V-composes with it; its W_O is
  scaled down (``V_OUTPUT_SCALE``) so that the model stays about as good a predictor.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from checks.model import AttnOnlyTransformer

PLANTS = ("recent_tokens", "previous_token", "v_composition")
# The V-composing head's output is scaled down so that the model still predicts about as well
# as before (a control that ruined the model would be degenerate); composition scores do not
# depend on a matrix's scale.
V_OUTPUT_SCALE = 0.1
FIT_BATCH = 16  # sequences a planted pattern is fitted on: it is positional, so a few do


def planted(model: AttnOnlyTransformer, plant: str, previous: int, into: int, tokens: Tensor,
            window: int) -> AttnOnlyTransformer:
    """A copy of ``model`` with ``plant`` (one of PLANTS) written in; ``previous`` is the
    layer-0 previous-token head, ``into`` the head written over (layer 0 for
    ``recent_tokens``, layer 1 for ``v_composition``; unused by ``previous_token``), and
    ``tokens`` (batch, pos) the data a fitted pattern is fitted on."""
    if plant not in PLANTS:
        raise ValueError(f"plant must be one of {', '.join(PLANTS)}, not {plant!r}")
    copy = AttnOnlyTransformer(model.config)
    copy.load_state_dict(model.state_dict())
    copy.eval()
    with torch.no_grad():
        if plant == "recent_tokens":
            _copy_ov(copy, previous, into)
        elif plant == "previous_token":
            layer = copy.attention(0)
            for h in range(model.config.n_heads):
                if h != previous:
                    _copy_head(copy, previous, h)
            layer.W_O.mul_(1 / model.config.n_heads)  # together the copies write what the one head wrote
        else:
            reader, writer = copy.attention(1), copy.attention(0)
            W_V = writer.W_O[previous].T.clone()  # (d_model, d_head): reads what the head writes
            reader.W_V[into] = W_V * (reader.W_V[into].norm() / W_V.norm())
            reader.W_O[into] *= V_OUTPUT_SCALE
    if plant == "recent_tokens":
        fit_pattern(copy, into, recent_pattern(tokens.shape[1], window, model.W_E.dtype), tokens[:FIT_BATCH])
    return copy


def _copy_ov(model: AttnOnlyTransformer, source: int, target: int) -> None:
    layer = model.attention(0)
    layer.W_V[target] = layer.W_V[source]
    layer.W_O[target] = layer.W_O[source]


def _copy_head(model: AttnOnlyTransformer, source: int, target: int) -> None:
    layer = model.attention(0)
    for W in (layer.W_Q, layer.W_K, layer.W_V, layer.W_O):
        W[target] = W[source]


def recent_pattern(n_ctx: int, window: int, dtype: torch.dtype) -> Tensor:
    """(query_pos, key_pos): even attention on t-1 .. t-window (those that exist); the first
    position, with nothing before it, on itself."""
    t = torch.arange(n_ctx)
    back = t[:, None] - t[None, :]  # (query_pos, key_pos): how far back the key is
    target = ((back >= 1) & (back <= window)).to(dtype)
    target[0, 0] = 1.0
    return target / target.sum(dim=-1, keepdim=True)


def fit_pattern(model: AttnOnlyTransformer, head: int, target: Tensor, tokens: Tensor,
                steps: int = 300, lr: float = 0.05) -> float:
    """Fit layer-0 head ``head``'s W_Q and W_K (in place) so that its pattern on ``tokens`` is
    ``target`` (query_pos, key_pos), by the cross-entropy between them; every other weight is
    fixed. Deterministic: the same model, target and tokens give the same weights. Returns
    the final mean total-variation distance between pattern and target."""
    layer = model.attention(0)
    T = tokens.shape[1]
    x = (model.W_E[tokens] + model.W_pos[:T]).detach()  # (batch, pos, d_model): layer 0's query/key input
    W_Q = layer.W_Q[head].detach().clone().requires_grad_(True)
    W_K = layer.W_K[head].detach().clone().requires_grad_(True)
    optimizer = torch.optim.Adam([W_Q, W_K], lr=lr)
    mask = torch.full((T, T), -math.inf, dtype=x.dtype).triu(1)
    for _ in range(steps):
        log_pattern = torch.log_softmax((x @ W_Q) @ (x @ W_K).transpose(1, 2) * layer.scale + mask, dim=-1)
        loss = -(target * log_pattern.clamp(min=-1e4)).sum(dim=-1).mean()
        optimizer.zero_grad()
        loss.backward()  # type: ignore[no-untyped-call]
        optimizer.step()
    with torch.no_grad():
        layer.W_Q[head] = W_Q
        layer.W_K[head] = W_K
        pattern = torch.softmax((x @ W_Q) @ (x @ W_K).transpose(1, 2) * layer.scale + mask, dim=-1)
    return float(0.5 * (pattern - target).abs().sum(dim=-1).mean())
