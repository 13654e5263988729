from __future__ import annotations

import math

import pytest
import torch

from checks import circuits
from checks.data import repeated_random_tokens
from checks.model import AttnOnlyTransformer, ModelConfig

V, T = 8, 16  # vocab, context of the hand-built model


def hand_built_induction_model(sharpness: float = 30.0) -> AttnOnlyTransformer:
    """Two layers, one head each, weights written by hand.

    Residual basis: [0, V) the token, [V, 2V) the previous token (written by L0H0),
    [2V, 2V + T) the position (entering queries and keys only). L0H0 attends from t to t-1 by
    position and copies the token into the previous-token subspace; L1H0 matches the query's
    token against the key's previous token (K-composition) and copies the key's token out.
    """
    d_model, d_head = 2 * V + T, T
    config = ModelConfig(n_layers=2, n_heads=1, d_model=d_model, d_head=d_head, d_vocab=V,
                         n_ctx=T, dtype="float64")
    model = AttnOnlyTransformer(config)
    c = sharpness * math.sqrt(d_head)
    with torch.no_grad():
        for p in model.parameters():
            p.zero_()
        model.W_E[:, :V] = torch.eye(V)
        model.W_pos[:, 2 * V :] = torch.eye(T)
        model.W_U[:V, :] = torch.eye(V)
        l0, l1 = model.attention(0), model.attention(1)
        for t in range(T):
            l0.W_Q[0, 2 * V + t, t] = c
            if t + 1 < T:
                l0.W_K[0, 2 * V + t, t + 1] = 1.0
        for i in range(V):
            l0.W_V[0, i, i] = 1.0
            l0.W_O[0, i, V + i] = 1.0
            l1.W_Q[0, i, i] = c
            l1.W_K[0, V + i, i] = 1.0
            l1.W_V[0, i, i] = 1.0
            l1.W_O[0, i, i] = 1.0
    return model


def permutation_repeats(batch: int) -> torch.Tensor:
    """[r, r] with r a random permutation of the vocabulary (no token twice within r)."""
    g = torch.Generator().manual_seed(0)
    r = torch.stack([torch.randperm(V, generator=g) for _ in range(batch)])
    return torch.cat([r, r], dim=1)


def test_hand_built_model_is_found_to_be_an_induction_circuit() -> None:
    model = hand_built_induction_model()
    tokens = permutation_repeats(16)
    with torch.no_grad():
        scores = circuits.repeat_scores(model(tokens).patterns, V)
    assert float(scores["previous"][0, 0]) > 0.9
    assert float(scores["induction"][1, 0]) > 0.9
    comp = circuits.composition_scores(model)
    assert float(comp["K"][0, 0]) == pytest.approx(1 / math.sqrt(V))
    assert float(comp["Q"][0, 0]) == 0.0 and float(comp["V"][0, 0]) == 0.0
    assert circuits.copying(model, 1, 0) == pytest.approx((1.0, 1.0))
    assert circuits.same_matching(model, (1, 0), (0, 0)) == pytest.approx((1.0, 1.0))
    ablated = circuits.values_ablated(model, tokens, [(0, 0)])
    after = circuits.repeat_scores(list(ablated), V)["induction"][1, 0]
    assert float(after) < 0.5 * float(scores["induction"][1, 0])
    # no V-composition: the virtual-head terms vanish, so removing them costs nothing
    losses = circuits.path_order_losses(model, tokens)
    assert losses["first_order"] == pytest.approx(losses["full"])
    assert losses["first_order"] < losses["direct"]


def test_eigenvalue_positivity_and_top1() -> None:
    assert circuits.eigenvalue_positivity(torch.eye(5)) == pytest.approx(1.0)
    assert circuits.eigenvalue_positivity(-torch.eye(5)) == pytest.approx(-1.0)
    rotation = torch.tensor([[0.0, -1.0], [1.0, 0.0]])  # eigenvalues +-i: sum 0
    assert circuits.eigenvalue_positivity(rotation) == pytest.approx(0.0, abs=1e-12)
    assert circuits.diagonal_top1(torch.eye(4)) == 1.0
    first_column = torch.zeros(4, 4)
    first_column[:, 0] = 1.0
    assert circuits.diagonal_top1(first_column) == 0.25


@pytest.mark.parametrize("d_model", [32, 64])
def test_composition_baseline_is_about_one_over_sqrt_d(d_model: int) -> None:
    base = circuits.composition_baseline(d_model, 16, torch.Generator().manual_seed(0), 100)
    for value in base.values():
        assert value == pytest.approx(1 / math.sqrt(d_model), rel=0.1)


@pytest.mark.parametrize("n_layers", [1, 2, 3])
def test_path_expansion_is_exact_on_random_models(n_layers: int) -> None:
    torch.manual_seed(n_layers)
    model = AttnOnlyTransformer(ModelConfig(n_layers=n_layers, dtype="float64", init_std=0.2))
    tokens = torch.randint(0, 64, (3, 32))
    with torch.no_grad():
        out = model(tokens)
        terms = circuits.path_logits(model, tokens, out.patterns)
        groups = circuits.score_groups(model, tokens, out.patterns, n_layers - 1)
    assert len(terms) == (1 + 4) ** n_layers
    assert sum(1 for p in terms if len(p) == 1) == 4 * n_layers
    total = sum(terms.values(), torch.zeros_like(out.logits))
    assert float((total - out.logits).abs().max()) < 1e-9
    scores = sum(groups.values(), torch.zeros_like(out.scores[-1]))
    assert float((scores - out.scores[-1]).abs().max()) < 1e-9


@pytest.mark.parametrize("switch", ["layer_norm", "biases"])
def test_path_expansion_misses_with_layer_norm_or_biases(switch: str) -> None:
    torch.manual_seed(0)
    config = ModelConfig(dtype="float64", init_std=0.2, **{switch: True})  # type: ignore[arg-type]
    model = AttnOnlyTransformer(config)
    tokens = torch.randint(0, 64, (3, 32))
    with torch.no_grad():
        out = model(tokens)
        total = sum(circuits.path_logits(model, tokens, out.patterns).values(), torch.zeros_like(out.logits))
    assert float((total - out.logits).abs().max()) > 1e-2


def test_repeat_scores_on_exact_patterns() -> None:
    L = 5
    prev = torch.diag(torch.ones(2 * L - 1), -1)
    prev[0, 0] = 1.0
    scores = circuits.repeat_scores([prev[None, None]], L)
    assert float(scores["previous"][0, 0]) == 1.0
    assert float(scores["induction"][0, 0]) == 0.0
    tokens = repeated_random_tokens(2, L, 7, torch.Generator().manual_seed(0))
    assert torch.equal(tokens[:, :L], tokens[:, L:])


def test_names() -> None:
    assert circuits.head_name((0, 2)) == "L0H2"
    assert circuits.path_name(()) == "direct"
    assert circuits.path_name(((0, 1), (1, 3))) == "L0H1>L1H3"
    assert len(circuits.all_paths(2, 4)) == 1 + 2 * 4 + 4**2
