from __future__ import annotations

import torch

from checks.model import AttnOnlyTransformer, ModelConfig


def test_shapes_and_cache() -> None:
    config = ModelConfig(n_layers=2, n_heads=3, d_model=24, d_head=8, d_vocab=11, n_ctx=10)
    model = AttnOnlyTransformer(config)
    tokens = torch.randint(0, 11, (2, 7))
    with torch.no_grad():
        out = model(tokens, per_head=True)
    assert out.logits.shape == (2, 7, 11)
    assert len(out.patterns) == 2 and out.patterns[0].shape == (2, 3, 7, 7)
    assert len(out.residuals) == 3 and out.residuals[0].shape == (2, 7, 24)
    assert out.head_outputs[1].shape == (2, 3, 7, 24)
    # causal, rows sum to one
    assert torch.allclose(out.patterns[1].sum(-1), torch.ones(2, 3, 7))
    assert float(out.patterns[0].triu(1).abs().max()) == 0.0
    # per-head outputs add up to the layer's contribution
    added = out.residuals[1] - out.residuals[0]
    assert torch.allclose(out.head_outputs[0].sum(1), added, atol=1e-6)


def test_no_biases_no_layer_norm_by_default() -> None:
    names = {n for n, _ in AttnOnlyTransformer(ModelConfig()).named_parameters()}
    assert names == {"W_E", "W_pos", "W_U"} | {
        f"blocks.{i}.W_{m}" for i in range(2) for m in "QKVO"
    }
    with_both = AttnOnlyTransformer(ModelConfig(layer_norm=True, biases=True))
    names = {n for n, _ in with_both.named_parameters()}
    assert "b_U" in names and "blocks.0.b_O" in names and "lns.2.w" in names


def test_positions_enter_queries_and_keys_only() -> None:
    torch.manual_seed(0)
    model = AttnOnlyTransformer(ModelConfig(dtype="float64"))
    tokens = torch.randint(0, 64, (1, 12))
    out = model(tokens)
    assert torch.equal(out.residuals[0], model.W_E[tokens])  # the stream starts with tokens alone


def test_frozen_patterns_and_value_ablation() -> None:
    torch.manual_seed(0)
    model = AttnOnlyTransformer(ModelConfig(dtype="float64", init_std=0.2))
    tokens = torch.randint(0, 64, (2, 20))
    out = model(tokens)
    frozen = model(tokens, patterns=out.patterns)
    assert torch.equal(frozen.logits, out.logits)
    uniform = [torch.full_like(p, 0.0) + torch.tril(torch.ones(20, 20, dtype=torch.float64)) / torch.arange(1, 21)[:, None] for p in out.patterns]
    assert not torch.allclose(model(tokens, patterns=uniform).logits, out.logits)
    scale = torch.ones(2, 4, dtype=torch.float64)
    scale[0, 1] = 0.0
    ablated = model(tokens, value_scale=scale, per_head=True)
    assert float(ablated.head_outputs[0][:, 1].detach().abs().max()) == 0.0
    assert torch.equal(ablated.patterns[0], out.patterns[0])


def test_to_dtype_keeps_the_function() -> None:
    torch.manual_seed(0)
    model = AttnOnlyTransformer(ModelConfig())
    tokens = torch.randint(0, 64, (2, 16))
    double = model.to_dtype("float64")
    assert double.W_E.dtype == torch.float64
    assert torch.allclose(double(tokens).logits.float(), model(tokens).logits, atol=1e-5)


def test_fused_logits_are_the_forward_logits() -> None:
    """What training runs (fused attention, nothing kept) computes what forward() does, in
    every configuration, and its gradients too."""
    tokens = torch.randint(0, 64, (5, 40), generator=torch.Generator().manual_seed(1))
    for settings in [{}, {"layer_norm": True}, {"biases": True}, {"n_layers": 3, "dtype": "float64"}]:
        model = AttnOnlyTransformer(ModelConfig(**settings), generator=torch.Generator().manual_seed(0))  # type: ignore[arg-type]
        fused, full = model.logits(tokens), model(tokens).logits
        tol = 1e-12 if settings.get("dtype") == "float64" else 1e-5
        assert fused.shape == full.shape == (5, 40, 64)
        assert torch.allclose(fused, full, rtol=0, atol=tol * float(full.detach().abs().max())), settings
        g_fused = torch.autograd.grad(fused.square().sum(), list(model.parameters()))
        g_full = torch.autograd.grad(full.square().sum(), list(model.parameters()))
        scale = max(float(g.abs().max()) for g in g_full)  # (b_K's gradient is 0 but for rounding)
        for a, b in zip(g_fused, g_full, strict=True):
            assert torch.allclose(a, b, rtol=0, atol=tol * scale), settings
