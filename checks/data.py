"""Sequences of random tokens with a repeated stretch, the data on which induction heads form.

A model trained on ``[r, r]`` with a fixed ``|r|`` can predict the second half by position
alone (attend ``|r| - 1`` tokens back), with no previous-token head: not the mechanism under
test. So the repeat here has a random length and starts at random places: the only way to
find the earlier occurrence is by content.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import torch
from torch import Tensor


class Batch(NamedTuple):
    """One batch and how it was written; every field is (batch, n_ctx).

    tokens:   int64 token ids
    repeated: bool, the positions whose token copies an earlier one by construction
    source:   int64, the position each token was copied from (its own position where fresh)
    start:    bool, the first position of each segment
    """

    tokens: Tensor
    repeated: Tensor
    source: Tensor
    start: Tensor


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
        drawn = self.draw(batch_size, generator)
        return drawn.tokens, drawn.repeated

    def draw(self, batch_size: int, generator: torch.Generator) -> Batch:
        """A batch with its layout (which segment copies what), for every sequence at once.

        The segments tile each sequence: segment ``i`` starts where the first ``i`` lengths end,
        is cut at ``n_ctx``, and copies when its draw is below ``repeat_prob`` and at least its
        length of tokens precede it, from a start drawn uniformly among the places whose stretch
        ends by its own start. A copied stretch may itself hold copies: following each position's
        source back (pointer doubling, ``log2 n_ctx`` gathers) reaches the fresh token it shows.
        """
        B, T = batch_size, self.n_ctx
        tokens = torch.randint(0, self.d_vocab, (B, T), generator=generator)
        n_draws = T // self.min_len + 1  # enough segments to cover the sequence
        lengths = torch.randint(self.min_len, self.max_len + 1, (B, n_draws), generator=generator)
        draws = torch.rand(B, n_draws, 2, generator=generator)  # (batch, segment, [copy?, source])
        ends = lengths.cumsum(1)  # (batch, segment): where each segment ends, uncut
        starts = ends - lengths  # (batch, segment)
        n = torch.minimum(lengths, (T - starts).clamp(min=0))  # lengths cut at n_ctx
        u = draws.double()  # the draws as the float64 numbers a scalar loop would compare
        copies = (starts < T) & (starts >= n) & (u[..., 0] < self.repeat_prob)  # (batch, segment)
        src = (u[..., 1] * (starts - n + 1).double()).floor().long()  # a stretch ending by its start
        positions = torch.arange(T).repeat(B, 1)  # (batch, pos)
        segment = torch.searchsorted(ends, positions, right=True)  # (batch, pos): segment of each position
        offset = positions - starts.gather(1, segment)  # (batch, pos): place within its segment
        repeated = copies.gather(1, segment)  # (batch, pos)
        source = torch.where(repeated, src.gather(1, segment) + offset, positions)
        root = source
        for _ in range(max(1, math.ceil(math.log2(T)))):
            root = root.gather(1, root)  # each step doubles how far back a chain is followed
        return Batch(tokens.gather(1, root), repeated, source, offset == 0)


def repeated_random_tokens(
    batch_size: int, length: int, d_vocab: int, generator: torch.Generator
) -> Tensor:
    """``[r, r]``: ``length`` random tokens, then the same again. (batch, 2 * length) int64.

    The standard probe for previous-token, duplicate-token and induction heads.
    """
    r = torch.randint(0, d_vocab, (batch_size, length), generator=generator)
    return torch.cat([r, r], dim=1)
