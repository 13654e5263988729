"""An attention-only transformer, the model family of Elhage et al. 2021 (LIT-1534).

nanoGPT-plain: an embedding, ``n_layers`` attention blocks that add into the residual
stream, an unembedding. By default there is no LayerNorm and no bias anywhere (the setting
in which the paper's path expansion is exact); ``layer_norm`` and ``biases`` switch them on
for the controls. Positions are added to the query and key inputs only ("shortformer"
positions, as in the paper's small models), so the residual stream carries tokens alone.

Row-vector convention throughout: a head computes ``A (X W_V) W_O`` with
``A = softmax(mask((X+P) W_Q ((X+P) W_K)^T / sqrt(d_head)))``. The paper writes column
vectors, so its ``W_OV = W_O W_V`` is our ``W_V @ W_O`` and its ``W_QK = W_Q^T W_K`` is our
``W_Q @ W_K^T``.

The forward pass returns every attention pattern (and the other intermediate values the
circuit analysis reads), and can run with patterns supplied ("frozen"), or with chosen heads'
values scaled (ablated); ``logits`` computes the logits alone by fused attention, for training.
Tokens are embedded by ``embedding``, whose gradient sums in a fixed order on any number of
threads (``W_E[tokens]``'s does not: training on two threads gave different weights each run).
No I/O here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import torch
from torch import Tensor, nn

DTYPES: dict[str, torch.dtype] = {"float32": torch.float32, "float64": torch.float64}


@dataclass(frozen=True)
class ModelConfig:
    n_layers: int = 2
    n_heads: int = 4
    d_model: int = 64
    d_head: int = 16
    d_vocab: int = 64
    n_ctx: int = 64
    layer_norm: bool = False
    biases: bool = False
    dtype: str = "float32"
    init_std: float = 0.02  # std of every weight (and bias, when biases are on) at init

    @property
    def torch_dtype(self) -> torch.dtype:
        return DTYPES[self.dtype]


@dataclass
class ModelOutput:
    """What one forward pass computed.

    logits:       (batch, pos, d_vocab)
    residuals:    per layer, the residual stream entering it, (batch, pos, d_model);
                  one more at the end: the stream entering the unembedding
    scores:       per layer, attention scores before mask and softmax, (batch, head, query_pos, key_pos)
    patterns:     per layer, attention patterns, (batch, head, query_pos, key_pos)
    head_outputs: per layer, each head's output before the sum, (batch, head, pos, d_model);
                  empty unless asked for (``per_head=True``)
    """

    logits: Tensor
    residuals: list[Tensor]
    scores: list[Tensor]
    patterns: list[Tensor]
    head_outputs: list[Tensor]


class LayerNorm(nn.Module):
    """LayerNorm with an optional bias (only ever used by the controls)."""

    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.ones(config.d_model, dtype=config.torch_dtype))
        self.b = (
            nn.Parameter(torch.zeros(config.d_model, dtype=config.torch_dtype))
            if config.biases
            else None
        )

    def forward(self, x: Tensor) -> Tensor:
        return nn.functional.layer_norm(x, x.shape[-1:], self.w, self.b, eps=1e-5)


def _per_head_in(W: Tensor) -> Tensor:
    """(head, d_model, d_head) -> (d_model, head * d_head), heads side by side."""
    return W.transpose(0, 1).reshape(W.shape[1], -1)


class Attention(nn.Module):
    """One attention layer of ``n_heads`` heads, weights stored per head (TransformerLens style).

    W_Q, W_K, W_V: (head, d_model, d_head);  W_O: (head, d_head, d_model)
    """

    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        h, d, dh, dt = config.n_heads, config.d_model, config.d_head, config.torch_dtype
        self.W_Q = nn.Parameter(torch.empty(h, d, dh, dtype=dt))
        self.W_K = nn.Parameter(torch.empty(h, d, dh, dtype=dt))
        self.W_V = nn.Parameter(torch.empty(h, d, dh, dtype=dt))
        self.W_O = nn.Parameter(torch.empty(h, dh, d, dtype=dt))
        self.b_Q: nn.Parameter | None = None
        self.b_K: nn.Parameter | None = None
        self.b_V: nn.Parameter | None = None
        self.b_O: nn.Parameter | None = None
        if config.biases:
            self.b_Q = nn.Parameter(torch.empty(h, dh, dtype=dt))
            self.b_K = nn.Parameter(torch.empty(h, dh, dtype=dt))
            self.b_V = nn.Parameter(torch.empty(h, dh, dtype=dt))
            self.b_O = nn.Parameter(torch.empty(d, dtype=dt))
        self.scale = 1.0 / math.sqrt(dh)
        causal = torch.tril(torch.ones(config.n_ctx, config.n_ctx, dtype=torch.bool))
        mask = torch.zeros(config.n_ctx, config.n_ctx, dtype=dt).masked_fill(~causal, float("-inf"))
        self.register_buffer("mask", mask, persistent=False)  # (query_pos, key_pos): 0 or -inf

    def qkv(self, x: Tensor, pos: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """Queries, keys and values, each (batch, head, pos, d_head), from the residual x
        (batch, pos, d_model) and the positions pos (pos, d_model)."""
        B, T, _ = x.shape
        H, dh = self.W_Q.shape[0], self.W_Q.shape[2]
        xqk = x + pos  # (batch, pos, d_model): positions enter queries and keys only
        q = (xqk @ _per_head_in(self.W_Q)).view(B, T, H, dh).transpose(1, 2)
        k = (xqk @ _per_head_in(self.W_K)).view(B, T, H, dh).transpose(1, 2)
        v = (x @ _per_head_in(self.W_V)).view(B, T, H, dh).transpose(1, 2)
        if self.b_Q is not None and self.b_K is not None and self.b_V is not None:
            q = q + self.b_Q[:, None, :]
            k = k + self.b_K[:, None, :]
            v = v + self.b_V[:, None, :]
        return q, k, v

    def forward(
        self,
        x: Tensor,
        pos: Tensor,
        pattern: Tensor | None = None,
        value_scale: Tensor | None = None,
        per_head: bool = False,
    ) -> tuple[Tensor, Tensor, Tensor, Tensor | None]:
        """x: (batch, pos, d_model) the (normalised) residual; pos: (pos, d_model).

        pattern:     (batch, head, query_pos, key_pos) to use instead of the computed one
        value_scale: (head,) multiplies each head's values (0 ablates the head's values)
        per_head:    also return each head's output, (batch, head, pos, d_model)
        Returns (out, scores, pattern, head_out); out is (batch, pos, d_model).
        """
        B, T, _ = x.shape
        H, dh = self.W_Q.shape[0], self.W_Q.shape[2]
        q, k, v = self.qkv(x, pos)
        if value_scale is not None:
            v = v * value_scale[:, None, None]
        scores = (q * self.scale) @ k.transpose(-1, -2)  # (batch, head, query_pos, key_pos)
        if pattern is None:
            mask: Tensor = self.mask  # type: ignore[assignment]
            pattern = torch.softmax(scores + mask[:T, :T], dim=-1)  # (batch, head, query_pos, key_pos)
        z = pattern @ v  # (batch, head, pos, d_head)
        head_out = None
        if per_head:
            head_out = torch.einsum("bhpe,hed->bhpd", z, self.W_O)  # (batch, head, pos, d_model)
        out = z.transpose(1, 2).reshape(B, T, H * dh) @ self.W_O.reshape(H * dh, -1)  # (batch, pos, d_model)
        if self.b_O is not None:
            out = out + self.b_O
        return out, scores, pattern, head_out

    def fused(self, x: Tensor, pos: Tensor) -> Tensor:
        """``forward``'s output alone, (batch, pos, d_model), by torch's fused attention
        (``scaled_dot_product_attention``: no pattern is kept); equal to it to float rounding."""
        B, T, _ = x.shape
        H, dh = self.W_Q.shape[0], self.W_Q.shape[2]
        q, k, v = self.qkv(x, pos)
        z = nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True, scale=self.scale)
        out = z.transpose(1, 2).reshape(B, T, H * dh) @ self.W_O.reshape(H * dh, -1)  # (batch, pos, d_model)
        if self.b_O is not None:
            out = out + self.b_O
        return out


class AttnOnlyTransformer(nn.Module):
    """Embedding, ``n_layers`` attention layers adding into the residual stream, unembedding.

    W_E: (d_vocab, d_model); W_pos: (n_ctx, d_model); W_U: (d_model, d_vocab)
    """

    def __init__(self, config: ModelConfig, generator: torch.Generator | None = None) -> None:
        super().__init__()
        self.config = config
        dt = config.torch_dtype
        self.W_E = nn.Parameter(torch.empty(config.d_vocab, config.d_model, dtype=dt))
        self.W_pos = nn.Parameter(torch.empty(config.n_ctx, config.d_model, dtype=dt))
        self.blocks = nn.ModuleList(Attention(config) for _ in range(config.n_layers))
        self.lns = nn.ModuleList(
            LayerNorm(config) for _ in range(config.n_layers + 1 if config.layer_norm else 0)
        )
        self.W_U = nn.Parameter(torch.empty(config.d_model, config.d_vocab, dtype=dt))
        self.b_U = (
            nn.Parameter(torch.empty(config.d_vocab, dtype=dt)) if config.biases else None
        )
        self.reset_parameters(generator)

    def reset_parameters(self, generator: torch.Generator | None = None) -> None:
        """Every weight and bias ~ N(0, init_std^2), drawn from ``generator`` (torch's global
        generator when None); LayerNorm gains 1, offsets 0."""
        for name, p in self.named_parameters():
            if name.startswith("lns."):
                continue
            nn.init.normal_(p, mean=0.0, std=self.config.init_std, generator=generator)

    def to_dtype(self, dtype: str) -> AttnOnlyTransformer:
        """A copy of this model with its weights in ``dtype`` ("float32" or "float64")."""
        copy = AttnOnlyTransformer(replace(self.config, dtype=dtype))
        copy.load_state_dict({k: v.to(DTYPES[dtype]) for k, v in self.state_dict().items()})
        return copy.train(self.training)

    def attention(self, layer: int) -> Attention:
        block = self.blocks[layer]
        assert isinstance(block, Attention)
        return block

    def forward(
        self,
        tokens: Tensor,
        patterns: list[Tensor] | None = None,
        value_scale: Tensor | None = None,
        per_head: bool = False,
    ) -> ModelOutput:
        """tokens: (batch, pos) int64.

        patterns:    per layer (batch, head, query_pos, key_pos): run with these patterns frozen
        value_scale: (layer, head): multiplies each head's values (0 ablates them)
        per_head:    also keep each head's output (ModelOutput.head_outputs)
        """
        T = tokens.shape[1]
        assert self.config.n_ctx >= T, f"sequence of {T} tokens, context is {self.config.n_ctx}"
        pos = self.W_pos[:T]  # (pos, d_model)
        resid = nn.functional.embedding(tokens, self.W_E)  # (batch, pos, d_model)
        out = ModelOutput(resid, [], [], [], [])
        for layer in range(self.config.n_layers):
            out.residuals.append(resid)
            x = self.lns[layer](resid) if self.config.layer_norm else resid
            attn_out, scores, pattern, head_out = self.attention(layer)(
                x,
                pos,
                pattern=None if patterns is None else patterns[layer],
                value_scale=None if value_scale is None else value_scale[layer],
                per_head=per_head,
            )
            out.scores.append(scores)
            out.patterns.append(pattern)
            if head_out is not None:
                out.head_outputs.append(head_out)
            resid = resid + attn_out  # (batch, pos, d_model)
        out.residuals.append(resid)
        if self.config.layer_norm:
            resid = self.lns[-1](resid)
        logits = resid @ self.W_U  # (batch, pos, d_vocab)
        if self.b_U is not None:
            logits = logits + self.b_U
        out.logits = logits
        return out

    def logits(self, tokens: Tensor) -> Tensor:
        """(batch, pos, d_vocab): ``forward(tokens).logits``, by fused attention and keeping
        nothing else, to float rounding; what training runs."""
        T = tokens.shape[1]
        assert self.config.n_ctx >= T, f"sequence of {T} tokens, context is {self.config.n_ctx}"
        pos = self.W_pos[:T]  # (pos, d_model)
        resid = nn.functional.embedding(tokens, self.W_E)  # (batch, pos, d_model)
        for layer in range(self.config.n_layers):
            x = self.lns[layer](resid) if self.config.layer_norm else resid
            resid = resid + self.attention(layer).fused(x, pos)  # (batch, pos, d_model)
        if self.config.layer_norm:
            resid = self.lns[-1](resid)
        logits = resid @ self.W_U  # (batch, pos, d_vocab)
        return logits if self.b_U is None else logits + self.b_U
