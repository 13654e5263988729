"""Sequences of random tokens with a repeated stretch, the data on which induction heads form.

A model trained on ``[r, r]`` with a fixed ``|r|`` can predict the second half by position
alone (attend ``|r| - 1`` tokens back), with no previous-token head: not the mechanism under
test. So the repeat here has a random length and starts at random places: the only way to
find the earlier occurrence is by content.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor


@dataclass(frozen=True)
class RepeatData:
    """Random tokens in which stretches of earlier tokens recur.

    Each sequence is written segment by segment: a segment of ``min_len..max_len`` tokens is,
    with probability ``repeat_prob`` (and when enough tokens precede it), a copy of a stretch
    that starts at a random earlier place; otherwise fresh random tokens. With
    ``repeat_prob=0`` nothing recurs except by chance.
    """

    d_vocab: int = 64
    n_ctx: int = 64
    min_len: int = 4
    max_len: int = 16
    repeat_prob: float = 0.5

    def batch(self, batch_size: int, generator: torch.Generator) -> tuple[Tensor, Tensor]:
        """Returns (tokens, repeated): (batch, n_ctx) int64 and a (batch, n_ctx) bool mask of the
        positions whose token copies an earlier one by construction."""
        B, T = batch_size, self.n_ctx
        tokens = torch.randint(0, self.d_vocab, (B, T), generator=generator)
        repeated = torch.zeros(B, T, dtype=torch.bool)
        n_draws = T // self.min_len + 1
        lengths = torch.randint(self.min_len, self.max_len + 1, (B, n_draws), generator=generator)
        draws = torch.rand(B, n_draws, 2, generator=generator)  # (batch, segment, [copy?, source])
        for b in range(B):
            p = 0
            for i in range(n_draws):
                if p >= T:
                    break
                n = min(int(lengths[b, i]), T - p)
                if p >= n and draws[b, i, 0].item() < self.repeat_prob:
                    src = int(draws[b, i, 1].item() * (p - n + 1))  # a stretch ending by p
                    tokens[b, p : p + n] = tokens[b, src : src + n]
                    repeated[b, p : p + n] = True
                p += n
        return tokens, repeated


def repeated_random_tokens(
    batch_size: int, length: int, d_vocab: int, generator: torch.Generator
) -> Tensor:
    """``[r, r]``: ``length`` random tokens, then the same again. (batch, 2 * length) int64.

    The standard probe for previous-token, duplicate-token and induction heads.
    """
    r = torch.randint(0, d_vocab, (batch_size, length), generator=generator)
    return torch.cat([r, r], dim=1)
