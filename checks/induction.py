"""THEORY-977: induction heads by K-composition with a previous-token head.

On the lab's two-layer attention-only model, trained on random tokens with recurring
stretches, one measurement per clause of the claim:

- k-composition: the induction heads compose with the previous-token head through their keys,
  well above the level of random heads (``k_comp_over_baseline``) and well above their Q- and
  V-composition with it (``k_over_qv``, in units of the random level);
- previous-token: a layer-0 head attends to the previous token, it is clearly the induction
  heads' first K-composition partner (``k_comp_lead``), and removing its values breaks the
  induction pattern (``induction_drop``);
- recent-tokens (the paper's correction): the induction heads' second K-composition partner
  in layer 0 composes substantially too and attends over the last several tokens;
- induction: some layer-1 head attends from a token to the one after its earlier occurrence
  on repeated random tokens ``[r, r]``;
- copying, same-matching: the eigenvalues of their OV circuit and of their K-composition QK
  term are mostly positive;
- virtual-heads: removing the virtual-head terms (patterns frozen) costs little of the loss
  reduction the heads bring (``virtual_cost_fraction``).

Every criterion is measured on the induction heads, or where none passes the threshold (the
controls) on the most induction-like head, and summarised by its worst case over them: a
control fails on measured numbers. The composition scores are in units of the mean score of
random heads of the same shapes (``composition_baseline``), which is what an untrained model
shows. ``n_layers=1`` measures a one-layer model (a control: with no earlier layer to compose
with, it cannot form induction heads); the metrics about composition are then NaN.
``loss_below_uniform`` (ln d_vocab minus the loss) says whether a model learned anything.
"""

from __future__ import annotations

import math

import torch

from checks import circuits, figures
from checks.data import repeated_random_tokens
from checks.model import AttnOnlyTransformer
from checks.train import lab_configs, load_or_train
from recordtool import CheckContext

Metrics = dict[str, float | int | bool | list[float]]

# Every metric measure() may return (recordtool validate reads this; docs/checks.md).
METRICS = (
    "training_steps", "training_stopped_early", "final_train_loss", "final_eval_repeat_loss",
    "loss_curve", "loss", "loss_below_uniform", "previous_token_score", "previous_token_head",
    "n_induction_heads", "max_induction_score", "previous_scores_L0", "duplicate_scores_L0",
    "recent_scores_L0", "induction_scores_L0", "induction_scores_L1", "previous_scores_L1",
    "copying", "copying_top1", "loss_direct_path", "loss_first_order", "loss_full",
    "virtual_cost_fraction", "k_comp_baseline", "inv_sqrt_d_model", "q_composition",
    "k_composition", "v_composition", "k_comp_over_baseline", "k_over_qv", "k_comp_lead",
    "k_comp_rank", "same_matching", "same_matching_top1", "induction_drop",
    "induction_scores_prev_values_ablated", "partner_head", "partner_k_comp_over_baseline",
    "partner_recent_score", "partner_previous_score", "loss_prev_values_ablated",
)
COMPOSITION_METRICS = (
    "k_comp_over_baseline", "k_over_qv", "k_comp_lead", "k_comp_rank", "same_matching",
    "same_matching_top1", "induction_drop", "partner_head", "partner_k_comp_over_baseline",
    "partner_recent_score", "partner_previous_score", "loss_prev_values_ablated",
)


def measure(
    ctx: CheckContext,
    *,
    train: bool = True,
    n_layers: int = 2,
    repeat_prob: float | None = None,
    max_steps: int | None = None,
    threshold: float = 0.4,
    probe_length: int = 32,
    probe_batch: int = 64,
    window: int = 4,
) -> Metrics:
    """Induction and composition metrics of the lab's model.

    train:        False measures the model at its initialisation (a control)
    n_layers:     2, the lab's model; 1 for the one-layer control
    repeat_prob:  the training data's chance of a recurring stretch per segment (0: none)
    max_steps:    a training budget other than the lab's default
    threshold:    the score a head needs to count as previous-token / induction head
    probe_length: |r| of the ``[r, r]`` probe sequences
    window:       how many recent tokens the "recent" score sums over
    """
    torch.set_num_threads(ctx.threads)
    overrides: dict[str, object] = {"n_layers": n_layers}
    if repeat_prob is not None:
        overrides["repeat_prob"] = repeat_prob
    if max_steps is not None:
        overrides["max_steps"] = max_steps
    model_config, train_config = lab_configs(**overrides)
    metrics: Metrics = {}
    if train:
        trained = load_or_train(model_config, train_config, ctx.seed, ctx.cache_dir,
                                threads=ctx.threads, progress=ctx.progress)
        model = trained.model.to_dtype("float64")
        log = trained.log
        metrics |= {
            "training_steps": log.steps,
            "training_stopped_early": log.stopped_early,
            "final_train_loss": log.loss[-1],
            "final_eval_repeat_loss": log.eval_repeat_loss[-1] if log.eval_repeat_loss else math.nan,
            "loss_curve": log.loss,
        }
        stop = f"stopped early at step {log.steps}" if log.stopped_early else f"ran all {log.steps} steps"
        figures.loss_curve(ctx.figure(
            "loss.png", title=f"Training loss of the {n_layers}-layer model",
            caption=f"Cross-entropy (nats) on the training batches and, where measured, on the predictable "
                    f"second half of repeated sequences, by step; training {stop}."),
            log.loss_steps, log.loss, log.eval_steps, log.eval_repeat_loss)
    else:
        init = torch.Generator().manual_seed(ctx.seed)
        model = AttnOnlyTransformer(model_config, generator=init).to_dtype("float64")
        metrics["training_steps"] = 0
    model.eval()
    H, last = model_config.n_heads, n_layers - 1

    # What the model learned: its loss on the training distribution, against uniform guessing.
    batch, _ = train_config.data.batch(probe_batch, torch.Generator().manual_seed(ctx.seed + 6))
    with torch.no_grad():
        loss = circuits.next_token_loss(model(batch).logits, batch)
    metrics |= {"loss": loss, "loss_below_uniform": math.log(model_config.d_vocab) - loss}

    # Attention on repeated random tokens [r, r].
    gen = torch.Generator().manual_seed(ctx.seed + 4)
    probe = repeated_random_tokens(probe_batch, probe_length, model_config.d_vocab, gen)
    with torch.no_grad():
        patterns = model(probe).patterns
    scores = circuits.repeat_scores(patterns, probe_length, window)
    previous, recent = scores["previous"][0], scores["recent"][0]  # (head,) in layer 0
    induction = scores["induction"][last]  # (head,) in the last layer
    prev = int(previous.argmax())
    best = int(induction.argmax())
    inductive = [h for h in range(H) if float(induction[h]) > threshold]
    candidates = inductive or [best]
    metrics |= {
        "previous_token_score": float(previous[prev]),
        "previous_token_head": prev,
        "n_induction_heads": len(inductive),
        "max_induction_score": float(induction.max()),
        "previous_scores_L0": previous.tolist(),
        "duplicate_scores_L0": scores["duplicate"][0].tolist(),
        "recent_scores_L0": recent.tolist(),
        f"induction_scores_L{last}": induction.tolist(),
    }
    # What every model has: its induction candidates' OV circuits, and the loss of its path
    # expansion cut at each order (a one-layer model has no virtual heads: they cost nothing).
    copy_stats = [circuits.copying(model, last, h) for h in candidates]
    metrics["copying"] = min(stat for stat, _ in copy_stats)
    metrics["copying_top1"] = min(top1 for _, top1 in copy_stats)
    losses = circuits.path_order_losses(model, batch)
    gain = losses["direct"] - losses["first_order"]
    cost = losses["first_order"] - losses["full"]
    metrics |= {
        "loss_direct_path": losses["direct"],
        "loss_first_order": losses["first_order"],
        "loss_full": losses["full"],
        "virtual_cost_fraction": cost / gain if gain > 0 else math.nan,
    }
    if n_layers == 1:
        # Nothing to compose with: the composition criteria are undefined, not failed.
        metrics |= dict.fromkeys(COMPOSITION_METRICS, math.nan)
        heads = [(0, prev, "previous-token", float(previous[prev])), (0, best, "induction", float(induction[best]))]
        figures.patterns(ctx.figure("patterns.png", **_patterns_words(heads, threshold, probe_length)),
                         [(_panel(h, threshold), patterns[0][0, h[1]]) for h in heads])
        return metrics
    metrics["previous_scores_L1"] = scores["previous"][1].tolist()

    # Composition with layer 0, in units of random heads of the same shapes.
    comp = circuits.composition_scores(model, earlier=0, later=1)
    baseline = circuits.composition_baseline(
        model_config.d_model, model_config.d_head, torch.Generator().manual_seed(ctx.seed + 5)
    )
    unit = baseline["K"]
    metrics |= {
        "k_comp_baseline": unit,
        "inv_sqrt_d_model": 1.0 / math.sqrt(model_config.d_model),
        **{f"{name.lower()}_composition": comp[name].flatten().tolist() for name in comp},
    }

    # The per-head criteria; each summarised by its worst case over the candidate heads.
    ablated = circuits.values_ablated(model, probe, [(0, prev)])
    ablated_induction = circuits.repeat_scores(list(ablated), probe_length, window)["induction"][1]
    K = comp["K"][candidates]  # (candidate, layer-0 head)
    others = [j for j in range(H) if j != prev]
    per_head: dict[str, list[float]] = {k: [] for k in (
        "k_comp_over_baseline", "k_over_qv", "k_comp_lead", "k_comp_rank", "same_matching",
        "same_matching_top1", "induction_drop")}
    for i, h in enumerate(candidates):
        k = float(K[i, prev])
        per_head["k_comp_over_baseline"].append(k / unit)
        per_head["k_over_qv"].append((k - max(float(comp["Q"][h, prev]), float(comp["V"][h, prev]))) / unit)
        per_head["k_comp_lead"].append((k - max(float(K[i, j]) for j in others)) / unit)
        per_head["k_comp_rank"].append(1 + int((K[i] > k).sum()))
        stat, top1 = circuits.same_matching(model, (1, h), (0, prev))
        per_head["same_matching"].append(stat)
        per_head["same_matching_top1"].append(top1)
        per_head["induction_drop"].append(1.0 - float(ablated_induction[h]) / float(induction[h]))
    for name, values in per_head.items():
        metrics[name] = max(values) if name == "k_comp_rank" else min(values)
    metrics["induction_scores_prev_values_ablated"] = ablated_induction.tolist()

    # The paper's correction: the induction heads' second K-composition partner in layer 0
    # (their strongest after the previous-token head, worst case over the heads) composes
    # substantially too, and attends over the last several tokens.
    partner = max(others, key=lambda j: float(K[:, j].min()))
    metrics |= {
        "partner_head": partner,
        "partner_k_comp_over_baseline": float(K[:, partner].min()) / unit,
        "partner_recent_score": float(recent[partner]),
        "partner_previous_score": float(previous[partner]),
    }

    with torch.no_grad():
        scale = circuits.ablation_scale(model, [(0, prev)])
        metrics["loss_prev_values_ablated"] = circuits.next_token_loss(
            model(batch, value_scale=scale).logits, batch
        )

    # Figures: the previous-token head and the strongest induction head on one [r, r] sequence.
    heads = [(0, prev, "previous-token", float(previous[prev])), (1, best, "induction", float(induction[best]))]
    partner_name = circuits.head_name((0, partner))
    figures.patterns(
        ctx.figure("patterns.png", **_patterns_words(heads, threshold, probe_length,
                                                      f"Middle: {partner_name}, the layer-1 heads' strongest "
                                                      "K-composition partner after it, with a recent-tokens score "
                                                      f"of {float(recent[partner]):.2f}.")),
        [(_panel(heads[0], threshold), patterns[0][0, prev]),
         (f"{partner_name}: second K-partner (recent {float(recent[partner]):.2f})", patterns[0][0, partner]),
         (_panel(heads[1], threshold), patterns[1][0, best])])
    k_prev = min(float(K[i, prev]) for i in range(len(candidates))) / unit
    figures.composition(ctx.figure(
        "composition.png", title="Q-, K- and V-composition of layer-1 heads with layer-0 heads",
        caption=f"Each matrix: the composition score of a layer-1 head (row) with a layer-0 head (column); the "
                f"red line on the colour bar is the random baseline ({unit:.3f}). The "
                f"{'induction heads K-compose' if inductive else 'most induction-like head K-composes'} with "
                f"{circuits.head_name((0, prev))} at {k_prev:.1f} times the baseline (worst case)."),
        comp, unit)
    return metrics


Head = tuple[int, int, str, float]  # layer, head, the role its score measures, the score


def _panel(head: Head, threshold: float) -> str:
    """A panel's title that says what the head is in this run: 'L0H2: previous-token head
    (0.59)', or 'L0H1: most previous-token-like, none (0.06 ≤ 0.4)'."""
    layer, h, role, score = head
    name = circuits.head_name((layer, h))
    if score > threshold:
        return f"{name}: {role} head ({score:.2f})"
    return f"{name}: most {role}-like, none ({score:.2f} ≤ {threshold:g})"


def _patterns_words(heads: list[Head], threshold: float, probe_length: int, more: str = "") -> dict[str, str]:
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
