"""THEORY-988: with every attention pattern frozen at its value on the input, the logits of an
attention-only transformer without layer norm or biases are exactly the sum of its path terms
(direct, one per head, one per chain of heads: (1 + H)^L for L layers, 1 + 2H + H^2 for two,
chains of three heads from three layers on), and the last layer's attention scores are exactly
the sum of their direct, Q-, K- and both-sides composition groups.

Measured in float64 on a random model or on the lab's trained model (the same one THEORY-977
reads, through the shared cache). The controls switch on layer norm or biases: the same
expansion, which has no place for them, then misses by far.
"""

from __future__ import annotations

from typing import Any, TypedDict

import torch

from checks import circuits
from checks.model import AttnOnlyTransformer, ModelConfig
from checks.train import lab_configs, load_or_train
from recordtool import CheckContext


class ExpansionMetrics(TypedDict):
    max_abs_error: float
    error_without_longest_chains: float
    relative_error: float
    scores_max_abs_error: float
    scores_relative_error: float
    n_path_terms: int
    logit_scale: float
    term_norm_by_order: list[float]
    score_group_norms: list[float]
    training_steps: int


def measure(
    ctx: CheckContext,
    *,
    model: str = "random",
    n_layers: int = 2,
    dtype: str = "float64",
    layer_norm: bool = False,
    biases: bool = False,
    init_std: float = 0.2,
    max_steps: int | None = None,
    batch: int = 8,
) -> ExpansionMetrics:
    """Exactness of the path expansion of logits and of the last layer's attention scores.

    model:     "random" (weights ~ N(0, init_std^2)) or "trained" (the lab's model, trained
               with the given layer_norm/biases switches, then converted to ``dtype``)
    max_steps: a training budget other than the lab's default (trained models only)
    """
    torch.set_num_threads(ctx.threads)
    net, steps = _model(ctx, model, dtype, init_std, max_steps,
                        {"n_layers": n_layers, "layer_norm": layer_norm, "biases": biases})
    config = net.config
    net.eval()

    gen = torch.Generator().manual_seed(ctx.seed + 3)
    tokens = torch.randint(0, config.d_vocab, (batch, config.n_ctx), generator=gen)
    with torch.no_grad():
        out = net(tokens)
        terms = circuits.path_logits(net, tokens, out.patterns)
        expanded = sum(terms.values(), torch.zeros_like(out.logits))
        last = config.n_layers - 1
        groups = circuits.score_groups(net, tokens, out.patterns, last)
        scores_expanded = sum(groups.values(), torch.zeros_like(out.scores[last]))

    error = float((expanded - out.logits).abs().max())
    logit_scale = float(out.logits.abs().max())
    scores_error = float((scores_expanded - out.scores[last]).abs().max())
    score_scale = float(out.scores[last].abs().max())
    by_order = [
        float(sum((x.norm() ** 2 for p, x in terms.items() if len(p) == k), torch.zeros(())).sqrt())
        for k in range(config.n_layers + 1)
    ]
    longest = sum((x for p, x in terms.items() if len(p) == config.n_layers), torch.zeros_like(expanded))
    return {
        "max_abs_error": error,
        # the expansion without its chains of n_layers heads: how far it then misses
        "error_without_longest_chains": float((expanded - longest - out.logits).abs().max()) / logit_scale,
        "relative_error": error / logit_scale,
        "scores_max_abs_error": scores_error,
        "scores_relative_error": scores_error / score_scale,
        "n_path_terms": len(terms),
        "logit_scale": logit_scale,
        "term_norm_by_order": by_order,
        "score_group_norms": [float(g.norm()) for g in groups.values()],
        "training_steps": steps,
    }


def _model(ctx: CheckContext, model: str, dtype: str, init_std: float, max_steps: int | None,
           switches: dict[str, Any]) -> tuple[AttnOnlyTransformer, int]:
    """The model the expansion is measured on, and its training steps (0 for a random one)."""
    if model == "random":
        config = ModelConfig(**switches, dtype=dtype, init_std=init_std)
        return AttnOnlyTransformer(config, generator=torch.Generator().manual_seed(ctx.seed)), 0
    if model == "trained":
        overrides = switches if max_steps is None else {**switches, "max_steps": max_steps}
        trained = load_or_train(*lab_configs(**overrides), ctx.seed, ctx.cache_dir,
                                threads=ctx.threads, progress=ctx.progress)
        return trained.model.to_dtype(dtype), trained.log.steps
    raise ValueError(f"model must be 'random' or 'trained', not {model!r}")
