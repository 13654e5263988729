"""THEORY-977: induction heads by K-composition with a previous-token head.

On the lab's two-layer attention-only model, one named measurement per clause of the claim,
each a function below that ``measure`` calls in turn:

- ``k_composition``: the induction heads compose with the previous-token head through their
  keys, well above the level of random heads (``k_comp_over_baseline``) and well above their
  Q- and V-composition with it (``k_over_qv``); and no layer-1 head Q- or V-composes with any
  layer-0 head above twice the random level (``max_qv_comp_over_baseline``);
- ``previous_token_ablation`` and ``layer0_offsets``: a layer-0 head attends to the previous
  token, it is clearly the induction heads' first K-composition partner (``k_comp_lead``),
  and removing its values breaks the induction pattern (``induction_drop``);
- ``recent_tokens_partner`` (the paper's correction): a layer-0 head that is not a
  previous-token head spreads its attention over t-2 .. t-window, no single offset holding
  half of it, and some induction head K-composes with it above twice the random level;
- ``induction_heads``: some layer-1 head attends from a token to the one after its earlier
  occurrence on repeated random tokens ``[r, r]``;
- ``copying``, ``same_matching``: the eigenvalues of their OV circuit and of their
  K-composition QK term are mostly positive, each with a null (the output tokens permuted;
  the other layer-0 heads in the previous-token head's place);
- ``virtual_heads``: what removing the virtual-head terms (patterns frozen) costs of the loss
  reduction the heads bring (``virtual_cost_fraction``).

Every criterion is measured on the induction heads, or where none passes the threshold (the
controls) on the most induction-like head, and summarised by its worst case over them. The
composition scores are in units of the mean score of random heads of the same shapes
(``circuits.composition_baseline``), which is what an untrained model shows.

Settings (the check's params): ``data`` "repeat" (random tokens with recurring stretches) or
"text" (``checks.data.TextData``); ``n_layers=1`` measures a one-layer model, whose
composition metrics are NaN; ``frozen_layer0`` trains with layer 0 left at its
initialisation (a healthy model with no previous-token head to compose with); ``plant``
writes a hand-built head into the trained model (``checks.plant``).
``loss_below_uniform`` (ln d_vocab minus the loss) says whether a model learned anything.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor

from checks import circuits, figures
from checks.data import repeated_random_tokens
from checks.model import AttnOnlyTransformer, ModelConfig
from checks.plant import planted
from checks.train import TrainConfig, lab_configs, load_or_train
from recordtool import CheckContext

Metrics = dict[str, float | int | bool | list[float]]

# Every metric measure() may return (recordtool validate reads this; docs/checks.md).
METRICS = (
    "training_steps", "training_stopped_early", "final_train_loss", "final_eval_loss",
    "final_eval_repeat_loss", "loss_curve",
    "loss", "loss_below_uniform", "previous_token_score", "previous_token_head", "n_induction_heads",
    "max_induction_score", "previous_scores_L0", "duplicate_scores_L0", "induction_scores_L0",
    "induction_scores_L1", "recent_mass_L0", "recent_peak_share_L0", "copying", "copying_top1",
    "copying_null", "loss_direct_path", "loss_first_order", "loss_full", "virtual_cost_fraction",
    "k_comp_baseline", "q_composition", "k_composition", "v_composition", "k_comp_over_baseline",
    "k_over_qv", "k_comp_lead", "k_comp_rank", "max_qv_comp_over_baseline", "same_matching",
    "same_matching_top1", "same_matching_null", "induction_drop", "induction_scores_prev_values_ablated",
    "loss_prev_values_ablated", "recent_head_mass", "recent_partner_head",
    "recent_partner_k_comp_over_baseline", "recent_partner_n_composing", "planted_head",
)
COMPOSITION_METRICS = (
    "k_comp_over_baseline", "k_over_qv", "k_comp_lead", "k_comp_rank", "max_qv_comp_over_baseline",
    "same_matching", "same_matching_top1", "same_matching_null", "induction_drop",
    "loss_prev_values_ablated", "recent_partner_k_comp_over_baseline", "recent_partner_n_composing",
)


@dataclass(frozen=True, slots=True)
class Heads:
    """Who is who in a model, as measured: the layer-0 previous-token head (the most
    previous-token-like when none passes), the layer-0 heads whose previous-token score
    passes, and the layer-1 heads measured as induction heads (the most induction-like when
    none passes) and whether any passes."""

    previous: int
    previous_heads: list[int]
    candidates: list[int]
    inductive: bool


def measure(
    ctx: CheckContext,
    *,
    train: bool = True,
    data: str = "repeat",
    n_layers: int = 2,
    n_ctx: int | None = None,
    repeat_prob: float | None = None,
    max_steps: int | None = None,
    frozen_layer0: bool = False,
    plant: str | None = None,
    threshold: float = 0.4,
    probe_length: int = 32,
    probe_batch: int = 64,
    window: int = 5,
) -> Metrics:
    """Induction and composition metrics of the lab's model.

    train:         False measures the model at its initialisation (a control)
    data:          "repeat" (the lab's random tokens) or "text" (natural text)
    n_layers:      2, the lab's model; 1 for the one-layer control
    n_ctx, repeat_prob, max_steps, frozen_layer0: training settings other than the lab's default
    plant:         write a hand-built head into the trained model (``checks.plant.PLANTS``)
    threshold:     the score a head needs to count as previous-token / induction head
    probe_length:  |r| of the ``[r, r]`` probe sequences
    window:        the recent-tokens test counts attention on t-2 .. t-window
    """
    torch.set_num_threads(ctx.threads)
    settings = {"n_layers": n_layers, "n_ctx": n_ctx, "repeat_prob": repeat_prob, "max_steps": max_steps,
                "frozen_layer0": frozen_layer0 or None}
    model_config, train_config = lab_configs(data, **{k: v for k, v in settings.items() if v is not None})
    model, metrics = _model(ctx, train, model_config, train_config)
    batch, _ = train_config.data.held_out().batch(probe_batch, torch.Generator().manual_seed(ctx.seed + 6))
    probe = repeated_random_tokens(probe_batch, probe_length, model_config.d_vocab,
                                   torch.Generator().manual_seed(ctx.seed + 4))
    heads = _heads(model, batch, probe, probe_length, threshold, window)
    if plant is not None:
        into = (heads.previous + 1) % model_config.n_heads if plant != "v_composition" else heads.candidates[-1]
        model = planted(model, plant, heads.previous, into, batch, window)
        heads = _heads(model, batch, probe, probe_length, threshold, window)
        metrics["planted_head"] = into
    metrics |= learned(model, batch) | layer0_offsets(model, batch, window) | induction_heads(
        model, probe, probe_length, threshold)
    metrics |= copying(model, heads.candidates, ctx.seed) | virtual_heads(model, batch)
    metrics["previous_token_head"] = heads.previous
    if n_layers == 1:  # nothing to compose with: the composition criteria are undefined, not failed
        figures.patterns(ctx.figure("patterns.png", **_patterns_words(_shown(heads, metrics), threshold,
                                                                         probe_length)),
                         _panels(model, probe, _shown(heads, metrics), threshold))
        return metrics | dict.fromkeys(COMPOSITION_METRICS, math.nan)
    comp, baseline = _composition(model, ctx.seed)
    metrics |= k_composition(comp, baseline, heads) | same_matching(model, heads)
    metrics |= previous_token_ablation(model, batch, probe, probe_length, heads)
    metrics |= recent_tokens_partner(metrics, comp["K"] / baseline["K"], heads, threshold)
    _figures(ctx, model, probe, heads, metrics, comp, baseline["K"], (threshold, probe_length, window))
    return metrics


def _model(ctx: CheckContext, train: bool, model_config: ModelConfig,
           train_config: TrainConfig) -> tuple[AttnOnlyTransformer, Metrics]:
    """The model in float64, trained (from the cache) or at its initialisation, and what its
    training log says; the loss curve is drawn."""
    if not train:
        init = torch.Generator().manual_seed(ctx.seed)
        return AttnOnlyTransformer(model_config, generator=init).to_dtype("float64").eval(), {"training_steps": 0}
    trained = load_or_train(model_config, train_config, ctx.seed, ctx.cache_dir, threads=ctx.threads,
                            progress=ctx.progress)
    log = trained.log
    stop = f"stopped early at step {log.steps}" if log.stopped_early else f"ran all {log.steps} steps"
    repeats = any(math.isfinite(x) for x in log.eval_repeat_loss)
    figures.loss_curve(ctx.figure(
        "loss.png", title=f"Training loss of the {model_config.n_layers}-layer model",
        caption="Cross-entropy (nats) on the training batches and, where measured, on the predictable "
                f"second half of repeated sequences, by step; training {stop}."),
        log.loss_steps, log.loss, log.eval_steps if repeats else [], log.eval_repeat_loss if repeats else [])
    return trained.model.to_dtype("float64").eval(), {
        "training_steps": log.steps,
        "training_stopped_early": log.stopped_early,
        "final_train_loss": log.loss[-1],
        "final_eval_loss": log.eval_loss[-1] if log.eval_loss else math.nan,
        "final_eval_repeat_loss": log.eval_repeat_loss[-1] if log.eval_repeat_loss else math.nan,
        "loss_curve": log.loss,
    }


def _heads(model: AttnOnlyTransformer, batch: Tensor, probe: Tensor, probe_length: int, threshold: float,
           window: int) -> Heads:
    """Find the previous-token head(s) (on the data) and the induction heads (on ``[r, r]``)."""
    with torch.no_grad():
        previous = circuits.offset_profile(model(batch).patterns[0], window)[:, 1]
        induction = circuits.repeat_scores(model(probe).patterns, probe_length)["induction"][-1]
    inductive = [h for h in range(len(induction)) if float(induction[h]) > threshold]
    return Heads(previous=int(previous.argmax()),
                 previous_heads=[h for h in range(len(previous)) if float(previous[h]) > threshold],
                 candidates=inductive or [int(induction.argmax())], inductive=bool(inductive))


def learned(model: AttnOnlyTransformer, batch: Tensor) -> Metrics:
    """The loss on the training distribution, and how far below uniform guessing it is."""
    with torch.no_grad():
        loss = circuits.next_token_loss(model(batch).logits, batch)
    return {"loss": loss, "loss_below_uniform": math.log(model.config.d_vocab) - loss}


def layer0_offsets(model: AttnOnlyTransformer, batch: Tensor, window: int) -> Metrics:
    """Where layer 0's heads look back on the data: the previous-token score (offset 1), the
    mass on t-2 .. t-window, and the share of that mass the largest single offset holds."""
    with torch.no_grad():
        profile = circuits.offset_profile(model(batch).patterns[0], window)  # (head, offset)
    recent = profile[:, 2:].sum(dim=-1)
    share = profile[:, 2:].max(dim=-1).values / recent.clamp(min=1e-12)
    return {
        "previous_token_score": float(profile[:, 1].max()),
        "previous_scores_L0": profile[:, 1].tolist(),
        "recent_mass_L0": recent.tolist(),
        "recent_peak_share_L0": share.tolist(),
    }


def induction_heads(model: AttnOnlyTransformer, probe: Tensor, probe_length: int, threshold: float) -> Metrics:
    """The last layer's induction scores on ``[r, r]``, and how many heads pass the threshold."""
    with torch.no_grad():
        scores = circuits.repeat_scores(model(probe).patterns, probe_length)
    last = model.config.n_layers - 1
    induction = scores["induction"][last]
    return {
        "n_induction_heads": int((induction > threshold).sum()),
        "max_induction_score": float(induction.max()),
        "duplicate_scores_L0": scores["duplicate"][0].tolist(),
        f"induction_scores_L{last}": induction.tolist(),
    }


@torch.no_grad()
def copying(model: AttnOnlyTransformer, candidates: list[int], seed: int) -> Metrics:
    """The candidates' OV circuits: eigenvalue positivity of ``W_E W_OV W_U`` and its top-1
    diagonal accuracy, worst case; and the null, the same positivity with the output tokens
    permuted (a head that maps each token to itself is then no longer seen to copy)."""
    last = model.config.n_layers - 1
    stats = [circuits.copying(model, last, h) for h in candidates]
    permutation = torch.randperm(model.config.d_vocab, generator=torch.Generator().manual_seed(seed + 7))
    null = [circuits.eigenvalue_positivity(circuits.W_OV(model, last, h) @ model.W_U[:, permutation] @ model.W_E)
            for h in candidates]
    return {"copying": min(s for s, _ in stats), "copying_top1": min(t for _, t in stats), "copying_null": min(null)}


def virtual_heads(model: AttnOnlyTransformer, batch: Tensor) -> Metrics:
    """The loss of the path expansion cut at each order, and what the virtual heads' terms
    bring of the heads' gain (a one-layer model has none: they cost nothing)."""
    losses = circuits.path_order_losses(model, batch)
    gain = losses["direct"] - losses["first_order"]
    cost = losses["first_order"] - losses["full"]
    return {
        "loss_direct_path": losses["direct"],
        "loss_first_order": losses["first_order"],
        "loss_full": losses["full"],
        "virtual_cost_fraction": cost / gain if gain > 0 else math.nan,
    }


def _composition(model: AttnOnlyTransformer, seed: int) -> tuple[dict[str, Tensor], dict[str, float]]:
    """Q-, K- and V-composition of layer 1 with layer 0, and each one's random level."""
    config = model.config
    baseline = circuits.composition_baseline(config.d_model, config.d_head, torch.Generator().manual_seed(seed + 5))
    return circuits.composition_scores(model, earlier=0, later=1), baseline


def k_composition(comp: dict[str, Tensor], baseline: dict[str, float], heads: Heads) -> Metrics:
    """The candidates' K-composition with the previous-token head, in units of the random
    level: by itself, ahead of their Q- and V-composition with it, ahead of the next layer-0
    head, its rank; and the largest Q- or V-composition of any layer-1 head with any layer-0
    head (each in units of its own random level)."""
    unit, K, prev = baseline["K"], comp["K"][heads.candidates], heads.previous
    others = [j for j in range(K.shape[1]) if j != prev]
    qv = [max(float(comp["Q"][h, prev]), float(comp["V"][h, prev])) for h in heads.candidates]
    return {
        "k_comp_baseline": unit,
        **{f"{name.lower()}_composition": comp[name].flatten().tolist() for name in comp},
        "k_comp_over_baseline": float(K[:, prev].min()) / unit,
        "k_over_qv": min(float(K[i, prev]) - qv[i] for i in range(len(qv))) / unit,
        "k_comp_lead": min(float(K[i, prev] - K[i, others].max()) for i in range(len(qv))) / unit,
        "k_comp_rank": max(1 + int((K[i] > K[i, prev]).sum()) for i in range(len(qv))),
        "max_qv_comp_over_baseline": max(float(comp["Q"].max()) / baseline["Q"],
                                         float(comp["V"].max()) / baseline["V"]),
    }


def same_matching(model: AttnOnlyTransformer, heads: Heads) -> Metrics:
    """The K-composition term of the candidates' QK circuits through the previous-token
    head's OV: eigenvalue positivity and top-1, worst case; and the null, the same worst case
    with each other layer-0 head in the previous-token head's place, the highest of them."""
    stats = [circuits.same_matching(model, (1, h), (0, heads.previous)) for h in heads.candidates]
    others = [j for j in range(model.config.n_heads) if j != heads.previous]
    null = max(min(circuits.same_matching(model, (1, h), (0, j))[0] for h in heads.candidates) for j in others)
    return {"same_matching": min(s for s, _ in stats), "same_matching_top1": min(t for _, t in stats),
            "same_matching_null": null}


def previous_token_ablation(model: AttnOnlyTransformer, batch: Tensor, probe: Tensor, probe_length: int,
                            heads: Heads) -> Metrics:
    """The previous-token head's values removed: how far the candidates' induction scores
    fall (worst case), and the loss then."""
    with torch.no_grad():
        before = circuits.repeat_scores(model(probe).patterns, probe_length)["induction"][1]
        after = circuits.repeat_scores(list(circuits.values_ablated(model, probe, [(0, heads.previous)])),
                                       probe_length)["induction"][1]
        scale = circuits.ablation_scale(model, [(0, heads.previous)])
        loss = circuits.next_token_loss(model(batch, value_scale=scale).logits, batch)
    return {
        "induction_drop": min(1.0 - float(after[h]) / float(before[h]) for h in heads.candidates),
        "induction_scores_prev_values_ablated": after.tolist(),
        "loss_prev_values_ablated": loss,
    }


def recent_tokens_partner(metrics: Metrics, k_units: Tensor, heads: Heads, threshold: float) -> Metrics:
    """The correction's partner: among the layer-0 heads that are not previous-token heads,
    those that put more than half their attention on t-2 .. t-window with no single offset
    holding half of that are recent-tokens heads. ``recent_head_mass``: the largest such mass
    of a non-previous-token head whose attention is spread so (0 when none is);
    ``recent_partner_k_comp_over_baseline``: the strongest K-composition of *some* induction
    head with a recent-tokens head, in units of the random level (0 when there is no such
    head); ``recent_partner_n_composing``: how many induction heads compose with that head
    above twice the random level (``all`` would be all of them)."""
    mass, share = metrics["recent_mass_L0"], metrics["recent_peak_share_L0"]
    assert isinstance(mass, list) and isinstance(share, list)
    spread = [j for j in range(len(mass)) if j not in heads.previous_heads and share[j] < 0.5]
    recent = [j for j in spread if mass[j] > 0.5]
    composing = k_units[heads.candidates]  # (candidate, layer-0 head)
    partner = max(recent, key=lambda j: float(composing[:, j].max()), default=-1)
    return {
        "recent_head_mass": max((mass[j] for j in spread), default=0.0),
        "recent_partner_head": partner,
        "recent_partner_k_comp_over_baseline": float(composing[:, partner].max()) if partner >= 0 else 0.0,
        "recent_partner_n_composing": int((composing[:, partner] > 2).sum()) if partner >= 0 else 0,
    }


Shown = tuple[int, int, str, float]  # layer, head, the role its score measures, the score


def _shown(heads: Heads, metrics: Metrics) -> list[Shown]:
    """The heads the patterns figure shows: the previous-token head and the strongest
    induction candidate, with their scores."""
    previous, last = metrics["previous_scores_L0"], "induction_scores_L1" if "induction_scores_L1" in metrics \
        else "induction_scores_L0"
    induction = metrics[last]
    assert isinstance(previous, list) and isinstance(induction, list)
    best = max(range(len(induction)), key=lambda h: induction[h])
    return [(0, heads.previous, "previous-token", previous[heads.previous]),
            (int(last[-1]), best, "induction", induction[best])]


def _panels(model: AttnOnlyTransformer, probe: Tensor, shown: list[Shown], threshold: float) -> list[tuple[str, Tensor]]:
    with torch.no_grad():
        patterns = model(probe[:1]).patterns
    return [(_panel(s, threshold), patterns[s[0]][0, s[1]]) for s in shown]


def _figures(ctx: CheckContext, model: AttnOnlyTransformer, probe: Tensor, heads: Heads, metrics: Metrics,
             comp: dict[str, Tensor], unit: float, params: tuple[float, int, int]) -> None:
    """The patterns of the previous-token head, the recent-tokens partner (or the non-previous
    head with the most recent mass) and the strongest induction head; the composition scores.
    params: the threshold, the probe's |r| and the recent-tokens window."""
    threshold, probe_length, window = params
    shown = _shown(heads, metrics)
    mass, found, k_prev = metrics["recent_mass_L0"], metrics["recent_partner_head"], metrics["k_comp_over_baseline"]
    assert isinstance(mass, list) and isinstance(found, int) and isinstance(k_prev, float)
    partner = found if found >= 0 else max((j for j in range(len(mass)) if j != heads.previous), key=lambda j: mass[j])
    role = "recent-tokens partner" if found >= 0 else "no recent-tokens head; most recent mass"
    words = _patterns_words(shown, threshold, probe_length,
                            f"Middle: {circuits.head_name((0, partner))} ({role}), with "
                            f"{mass[partner]:.2f} of its attention on t-2 .. t-{window} on the training data.")
    panels = _panels(model, probe, shown, threshold)
    with torch.no_grad():
        middle = model(probe[:1]).patterns[0][0, partner]
    panels.insert(1, (f"{circuits.head_name((0, partner))}: {role} ({mass[partner]:.2f})", middle))
    figures.patterns(ctx.figure("patterns.png", **words), panels)
    figures.composition(ctx.figure(
        "composition.png", title="Q-, K- and V-composition of layer-1 heads with layer-0 heads",
        caption=f"Each matrix: the composition score of a layer-1 head (row) with a layer-0 head (column); the "
                f"red line on the colour bar is the random baseline ({unit:.3f}). The "
                f"{'induction heads K-compose' if heads.inductive else 'most induction-like head K-composes'} with "
                f"{circuits.head_name((0, heads.previous))} at {k_prev:.1f} times the baseline (worst case)."),
        comp, unit)


def _panel(head: Shown, threshold: float) -> str:
    """A panel's title that says what the head is in this run: 'L0H2: previous-token head
    (0.59)', or 'L0H1: most previous-token-like, none (0.06 ≤ 0.4)'."""
    layer, h, role, score = head
    name = circuits.head_name((layer, h))
    if score > threshold:
        return f"{name}: {role} head ({score:.2f})"
    return f"{name}: most {role}-like, none ({score:.2f} ≤ {threshold:g})"


def _patterns_words(heads: list[Shown], threshold: float, probe_length: int, more: str = "") -> dict[str, str]:
    """The title and caption of the attention patterns figure, saying what each head is here."""
    said = []
    for layer, h, role, score in heads:
        name = circuits.head_name((layer, h))
        article = ("an" if role[0] in "aeiou" else "a") if score > threshold else "no"
        said.append(f"{name} is {article} {role} head: its {role} score is "
                    f"{score:.2f}, {'above' if score > threshold else 'not above'} the {threshold:g} the claim "
                    "asks for" + ("" if score > threshold else f" (it is only the most {role}-like head)"))
    return {
        "title": "Attention on a repeated random sequence",
        "caption": f"Each panel: a head's attention from each query position (row) to each key position "
                   f"(column) on {probe_length} random tokens followed by the same {probe_length} again. "
                   + "; ".join(said) + "." + (f" {more}" if more else ""),
    }
