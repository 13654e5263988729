"""Circuit analysis of attention-only transformers, after Elhage et al. 2021 (LIT-1534).

The paper's vocabulary is the API: ``W_OV``, ``W_QK``, path terms, virtual heads, Q-, K- and
V-composition. Section names below are those of "A Mathematical Framework for Transformer
Circuits" (transformer-circuits.pub/2021/framework).

Row-vector convention (see checks/model.py): ``W_OV = W_V @ W_O`` acts as ``x @ W_OV`` and
``W_QK = W_Q @ W_K^T`` gives scores ``q W_QK k^T``; the paper's matrices are the transposes,
which leaves every Frobenius norm and eigenvalue used here unchanged.

Heads are named ``(layer, head)``; ``head_name`` writes them as the paper does (``L0H2``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import torch
from torch import Tensor

from checks.model import AttnOnlyTransformer
from checks.train import language_model_losses

Head = tuple[int, int]
Path = tuple[Head, ...]  # a chain of heads in increasing layers; () is the direct path


def head_name(head: Head) -> str:
    """``(0, 2)`` -> ``"L0H2"``."""
    return f"L{head[0]}H{head[1]}"


def path_name(path: Path) -> str:
    """``()`` -> ``"direct"``, ``((0, 1), (1, 3))`` -> ``"L0H1>L1H3"``."""
    return ">".join(head_name(h) for h in path) if path else "direct"


def W_OV(model: AttnOnlyTransformer, layer: int, head: int) -> Tensor:
    """The OV circuit's matrix, ``W_V W_O``: (d_model, d_model). Sec. "Attention Heads are
    Independent and Additive" / "the OV circuit"."""
    attn = model.attention(layer)
    return attn.W_V[head] @ attn.W_O[head]


def W_QK(model: AttnOnlyTransformer, layer: int, head: int) -> Tensor:
    """The QK circuit's bilinear form, ``W_Q W_K^T``: (d_model, d_model); scores are
    ``(x_q + p_q) W_QK (x_k + p_k)^T / sqrt(d_head)``. Sec. "the QK circuit"."""
    attn = model.attention(layer)
    return attn.W_Q[head] @ attn.W_K[head].T


def all_paths(n_layers: int, n_heads: int) -> list[Path]:
    """Every chain of heads with strictly increasing layers, the direct path first.

    (1 + n_heads) ** n_layers paths; for two layers 1 + 2H + H^2: the direct path, one per
    head, one per virtual head. Sec. "Two-Layer Attention-Only Transformers", "Path Expansion
    of Logits".
    """
    paths: list[Path] = [()]
    for layer in range(n_layers):
        paths += [(*p, (layer, h)) for p in paths for h in range(n_heads)]
    return sorted(paths, key=len)


@torch.no_grad()
def path_residuals(
    model: AttnOnlyTransformer, tokens: Tensor, patterns: list[Tensor], upto_layer: int | None = None
) -> dict[Path, Tensor]:
    """Each path's contribution to the residual stream, patterns frozen.

    tokens: (batch, pos); patterns: per layer (batch, head, query_pos, key_pos).
    Returns path -> (batch, pos, d_model) for the paths through layers below ``upto_layer``
    (all layers by default). A path's value is ``A^{h_n} ... A^{h_1} E W_OV^{h_1} ... W_OV^{h_n}``
    applied position-wise: Sec. "Path Expansion of Logits" (biases and layer norm ignored, as
    in the paper).
    """
    n_layers = model.config.n_layers if upto_layer is None else upto_layer
    values: dict[Path, Tensor] = {(): model.W_E[tokens]}  # (batch, pos, d_model)
    for layer in range(n_layers):
        new: dict[Path, Tensor] = {}
        for path, x in values.items():
            for h in range(model.config.n_heads):
                A = patterns[layer][:, h]  # (batch, query_pos, key_pos)
                new[(*path, (layer, h))] = A @ (x @ W_OV(model, layer, h))
        values.update(new)
    return values


def path_logits(
    model: AttnOnlyTransformer, tokens: Tensor, patterns: list[Tensor]
) -> dict[Path, Tensor]:
    """The logit terms of the path expansion: path -> (batch, pos, d_vocab). Their sum is the
    model's logits exactly when the model has no layer norm and no biases. Sec. "Path
    Expansion of Logits" (one layer: Eq. for ``T = Id ⊗ W_U W_E + Σ_h A^h ⊗ W_U W_OV^h W_E``)."""
    return {p: x @ model.W_U for p, x in path_residuals(model, tokens, patterns).items()}


@torch.no_grad()
def score_groups(
    model: AttnOnlyTransformer, tokens: Tensor, patterns: list[Tensor], layer: int
) -> dict[str, Tensor]:
    """A layer's attention scores split by where earlier heads enter the bilinear form.

    The query and key inputs are ``(E + P) + C`` where ``E + P`` are the token and position
    embeddings (the positional terms sit here) and ``C`` the sum of every path through earlier
    heads. Returns (batch, head, query_pos, key_pos) for each group:
    ``direct`` (E+P) QK (E+P)^T, ``q_composition`` C QK (E+P)^T, ``k_composition``
    (E+P) QK C^T, ``both`` C QK C^T, all scaled by 1/sqrt(d_head); their sum is the layer's
    scores. Sec. "Path Expansion of Attention Scores QK Circuit".
    """
    T = tokens.shape[1]
    paths = path_residuals(model, tokens, patterns, upto_layer=layer)
    embed = paths.pop(()) + model.W_pos[:T]  # (batch, pos, d_model)
    composed = sum(paths.values(), torch.zeros_like(embed))  # (batch, pos, d_model)
    scale = 1.0 / math.sqrt(model.config.d_head)
    groups: dict[str, list[Tensor]] = {"direct": [], "q_composition": [], "k_composition": [], "both": []}
    for h in range(model.config.n_heads):
        qk = W_QK(model, layer, h)  # (d_model, d_model)
        e_q, c_q = embed @ qk, composed @ qk  # (batch, pos, d_model)
        groups["direct"].append(e_q @ embed.transpose(1, 2) * scale)
        groups["q_composition"].append(c_q @ embed.transpose(1, 2) * scale)
        groups["k_composition"].append(e_q @ composed.transpose(1, 2) * scale)
        groups["both"].append(c_q @ composed.transpose(1, 2) * scale)
    return {name: torch.stack(g, dim=1) for name, g in groups.items()}


def _composition(a: Tensor, b: Tensor) -> Tensor:
    """||a b||_F / (||a||_F ||b||_F)."""
    ratio: Tensor = torch.linalg.matrix_norm(a @ b) / (
        torch.linalg.matrix_norm(a) * torch.linalg.matrix_norm(b)
    )
    return ratio


@torch.no_grad()
def composition_scores(
    model: AttnOnlyTransformer, earlier: int = 0, later: int = 1
) -> dict[str, Tensor]:
    """Q-, K- and V-composition of every head of layer ``later`` with every head of layer
    ``earlier``: name -> (later_head, earlier_head).

    Frobenius ratios of Sec. "Additional Intuition and Observations / Detecting and Measuring
    Composition": Q ``|W_QK^T W_OV|``, K ``|W_QK W_OV|``, V ``|W_OV^2 W_OV^1|``, each divided
    by the product of the two matrices' norms (row convention: W_OV1 W_QK, W_QK W_OV1^T,
    W_OV1 W_OV2).
    """
    H = model.config.n_heads
    out = {name: torch.zeros(H, H, dtype=model.W_E.dtype) for name in ("Q", "K", "V")}
    for h2 in range(H):
        qk, ov2 = W_QK(model, later, h2), W_OV(model, later, h2)
        for h1 in range(H):
            ov1 = W_OV(model, earlier, h1)
            out["Q"][h2, h1] = _composition(ov1, qk)
            out["K"][h2, h1] = _composition(qk, ov1.T)
            out["V"][h2, h1] = _composition(ov1, ov2)
    return out


def composition_baseline(
    d_model: int, d_head: int, generator: torch.Generator, n_samples: int = 200
) -> dict[str, float]:
    """The composition scores of random heads of the same shapes (Gaussian W_Q, W_K, W_V,
    W_O): the level a score must clear to mean anything. About 1/sqrt(d_model) whatever the
    rank. Returns the mean Q, K and V scores."""
    sums = {"Q": 0.0, "K": 0.0, "V": 0.0}
    for _ in range(n_samples):
        w = torch.randn(6, d_model, d_head, generator=generator, dtype=torch.float64)
        qk, ov1, ov2 = w[0] @ w[1].T, w[2] @ w[3].T, w[4] @ w[5].T
        sums["Q"] += float(_composition(ov1, qk))
        sums["K"] += float(_composition(qk, ov1.T))
        sums["V"] += float(_composition(ov1, ov2))
    return {k: v / n_samples for k, v in sums.items()}


def eigenvalue_positivity(M: Tensor) -> float:
    """sum(lambda) / sum(|lambda|) over the eigenvalues of a square matrix: +1 when all are
    positive (copying, same-matching), -1 when all negative. Sec. "Copying / Primitive
    Instructions" ("Detecting Copying Behavior")."""
    lam = torch.linalg.eigvals(M.double())
    return float(lam.sum().real / lam.abs().sum())


def diagonal_top1(M: Tensor) -> float:
    """Fraction of rows whose largest entry is on the diagonal. M: (n, n)."""
    return float((M.argmax(dim=-1) == torch.arange(M.shape[0])).double().mean())


@torch.no_grad()
def copying(model: AttnOnlyTransformer, layer: int, head: int) -> tuple[float, float]:
    """The full OV circuit ``W_E W_OV W_U`` (d_vocab, d_vocab; the paper's ``W_U W_OV W_E``):
    (positivity of its eigenvalues, top-1 diagonal accuracy). The eigenvalues are taken of the
    (d_model, d_model) ``W_OV W_U W_E``, which has the same non-zero ones. Sec. "Copying"."""
    ov = W_OV(model, layer, head)
    full = model.W_E @ ov @ model.W_U  # (d_vocab, d_vocab): source token -> output logits
    return eigenvalue_positivity(ov @ model.W_U @ model.W_E), diagonal_top1(full)


@torch.no_grad()
def same_matching(
    model: AttnOnlyTransformer, head: Head, previous: Head
) -> tuple[float, float]:
    """The K-composition term of ``head``'s QK circuit through ``previous``'s OV circuit,
    ``W_E W_QK (W_E W_OV^prev)^T`` (d_vocab, d_vocab; rows: the query's token, columns: the
    token ``previous`` moved into the key position): (positivity of its eigenvalues, top-1
    diagonal accuracy). An induction head matches same to same. Sec. "Two-Layer
    Attention-Only Transformers", "Induction Heads" (the K-composition term of the QK circuit).
    """
    qk = W_QK(model, *head)
    ov = W_OV(model, *previous)
    full = model.W_E @ qk @ (model.W_E @ ov).T  # (query token, key's previous token)
    return eigenvalue_positivity(qk @ ov.T @ model.W_E.T @ model.W_E), diagonal_top1(full)


def repeat_scores(patterns: list[Tensor], length: int) -> dict[str, Tensor]:
    """Attention scores on ``[r, r]`` sequences (|r| = ``length``): name -> (layer, head).

    previous:  mean attention from t to t-1, over t >= 1
    duplicate: mean attention from t to t-length (the same token earlier), over t >= length
    induction: mean attention from t to t-length+1 (the token after the earlier occurrence)
    Sec. "Induction Heads" (and Olsson et al. 2022 for the repeated-random-token probe).
    """
    P = torch.stack(patterns, dim=0)  # (layer, batch, head, query_pos, key_pos)
    T = P.shape[-1]
    t = torch.arange(1, T)
    s = torch.arange(length, T)
    return {
        "previous": P[..., t, t - 1].mean(dim=(1, 3)),
        "duplicate": P[..., s, s - length].mean(dim=(1, 3)),
        "induction": P[..., s, s - length + 1].mean(dim=(1, 3)),
    }


def offset_profile(pattern: Tensor, max_offset: int) -> Tensor:
    """How much attention a layer's heads put ``d`` tokens back, for d = 0 .. max_offset: the
    mean over the batch and over queries t >= max_offset of A[t, t-d]. pattern: (batch,
    head, query_pos, key_pos) -> (head, max_offset + 1); column 1 is the previous-token
    score, columns 2.. the mass a head spreads over the tokens before that."""
    t = torch.arange(max_offset, pattern.shape[-1])
    return torch.stack([pattern[..., t, t - d].mean(dim=(0, 2)) for d in range(max_offset + 1)], dim=-1)


def next_token_loss(logits: Tensor, tokens: Tensor) -> float:
    """Mean next-token cross-entropy (the training loss). logits (batch, pos, vocab)."""
    return float(language_model_losses(logits, tokens).mean())


def path_order_losses(model: AttnOnlyTransformer, tokens: Tensor) -> dict[str, float]:
    """Loss of the path expansion cut at each order, patterns frozen at their values on the
    input: ``direct`` (order 0), ``first_order`` (direct + one term per head), ``full`` (with the
    virtual-head terms too). Sec. "Two-Layer Attention-Only Transformers" (the ablation of
    virtual attention heads, "Path Expansion of Logits")."""
    with torch.no_grad():
        patterns = model(tokens).patterns
        terms = path_logits(model, tokens, patterns)
    direct = terms[()]
    first = direct + sum((x for p, x in terms.items() if len(p) == 1), torch.zeros_like(direct))
    full = first + sum((x for p, x in terms.items() if len(p) >= 2), torch.zeros_like(direct))
    return {
        "direct": next_token_loss(direct, tokens),
        "first_order": next_token_loss(first, tokens),
        "full": next_token_loss(full, tokens),
    }


def values_ablated(
    model: AttnOnlyTransformer, tokens: Tensor, heads: Iterable[Head]
) -> Tensor:
    """The patterns per layer, stacked (layer, batch, head, query_pos, key_pos), with the given
    heads' values zeroed (their outputs removed from the residual stream)."""
    with torch.no_grad():
        return torch.stack(model(tokens, value_scale=ablation_scale(model, heads)).patterns)


def ablation_scale(model: AttnOnlyTransformer, heads: Iterable[Head]) -> Tensor:
    """The ``value_scale`` that zeroes the given heads' values: (layer, head) ones and zeros."""
    scale = torch.ones(model.config.n_layers, model.config.n_heads, dtype=model.W_E.dtype)
    for layer, h in heads:
        scale[layer, h] = 0.0
    return scale
