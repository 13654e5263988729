"""The lab's data: random tokens with repeated stretches, on which induction heads form, and
natural text (``TextData``).

Random tokens with a repeated stretch:

A model trained on ``[r, r]`` with a fixed ``|r|`` can predict the second half by position
alone (attend ``|r| - 1`` tokens back), with no previous-token head: not the mechanism under
test. So the repeat here has a random length and starts at random places: the only way to
find the earlier occurrence is by content.
"""

from __future__ import annotations

import functools
import hashlib
import math
import pydoc_data.topics
from collections import Counter
from dataclasses import dataclass, replace
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

    def held_out(self) -> RepeatData:
        """Data a model is measured on: fresh random draws, like every training batch."""
        return self

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


def _folded(text: str) -> str:
    """Lower case, typographic quotes as plain ones: the text the tokenizer reads."""
    return text.lower().translate(str.maketrans("\u2019\u2018\u201c\u201d", "''\"\""))


@functools.lru_cache(maxsize=4)
def corpus(n_symbols: int) -> tuple[Tensor, str, str]:
    """The standard library's ``pydoc_data.topics`` (about 465 KB of English documentation,
    on every machine with Python) as characters: (token ids int64, the symbols, the text's
    sha256).

    The tokenizer is the simplest that keeps the lab's model shape: the text lower-cased, its
    ``n_symbols - 1`` most frequent characters one token each (ties by code point), every
    other character (under 200 of them: ``9``, ``^``, ``@``, dashes, ...) one shared token,
    the last. The topics are joined in the order of their names.
    """
    topics = pydoc_data.topics.topics
    text = _folded("".join(topics[name] for name in sorted(topics)))
    counts = Counter(text)
    symbols = "".join(sorted(counts, key=lambda c: (-counts[c], ord(c)))[: n_symbols - 1])
    index = {c: i for i, c in enumerate(symbols)}
    ids = torch.tensor([index.get(c, n_symbols - 1) for c in text], dtype=torch.int64)
    return ids, symbols, hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class TextData:
    """Windows of ``n_ctx`` characters of English documentation (``corpus``), drawn at random
    places: the natural-text setting, where nothing is planted and nothing recurs by
    construction. ``repeated`` is all False (no token is known to copy an earlier one).

    The first ``1 - eval_fraction`` of the text gives the training windows, the rest the
    evaluation ones (``split``), so a model is never evaluated on what it trained on.
    """

    d_vocab: int = 64
    n_ctx: int = 64
    eval_fraction: float = 0.1
    split: str = "train"

    def batch(self, batch_size: int, generator: torch.Generator) -> tuple[Tensor, Tensor]:
        ids, _, _ = corpus(self.d_vocab)
        cut = int(len(ids) * (1 - self.eval_fraction))
        lo, hi = (0, cut) if self.split == "train" else (cut, len(ids))
        starts = torch.randint(lo, hi - self.n_ctx, (batch_size,), generator=generator)
        tokens = ids[starts[:, None] + torch.arange(self.n_ctx)]  # (batch, n_ctx)
        return tokens, torch.zeros_like(tokens, dtype=torch.bool)

    def held_out(self) -> TextData:
        """Data a model is measured on: the evaluation windows, which it never trained on."""
        return replace(self, split="eval")

    def digest(self) -> str:
        """The corpus text's sha256: another Python's documentation trains another model."""
        return corpus(self.d_vocab)[2]
