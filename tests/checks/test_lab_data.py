"""The lab's training data: what RepeatData writes is what its docstring says, exactly."""

from __future__ import annotations

import torch

from checks.data import RepeatData, TextData, corpus, repeated_random_tokens


def reference_batch(data: RepeatData, batch_size: int, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """The specification, written as the obvious loop: segment by segment, sequence by sequence,
    drawing the same random numbers in the same order as RepeatData.draw."""
    B, T = batch_size, data.n_ctx
    tokens = torch.randint(0, data.d_vocab, (B, T), generator=generator)
    repeated = torch.zeros(B, T, dtype=torch.bool)
    n_draws = T // data.min_len + 1
    lengths = torch.randint(data.min_len, data.max_len + 1, (B, n_draws), generator=generator)
    draws = torch.rand(B, n_draws, 2, generator=generator)
    for b in range(B):
        p = 0
        for i in range(n_draws):
            if p >= T:
                break
            n = min(int(lengths[b, i]), T - p)
            if p >= n and draws[b, i, 0].item() < data.repeat_prob:
                src = int(draws[b, i, 1].item() * (p - n + 1))  # a stretch ending by p
                tokens[b, p : p + n] = tokens[b, src : src + n]
                repeated[b, p : p + n] = True
            p += n
    return tokens, repeated


SETTINGS = [
    RepeatData(),
    RepeatData(repeat_prob=1.0),
    RepeatData(repeat_prob=0.0),
    RepeatData(d_vocab=5, n_ctx=100, min_len=2, max_len=40, repeat_prob=0.9),
    RepeatData(n_ctx=7, min_len=5, max_len=9),
    RepeatData(n_ctx=33, min_len=1, max_len=1, repeat_prob=0.7),
]


def test_the_vectorised_batch_is_the_loop_bit_for_bit() -> None:
    for data in SETTINGS:
        for seed in range(4):
            want = reference_batch(data, 48, torch.Generator().manual_seed(seed))
            got = data.batch(48, torch.Generator().manual_seed(seed))
            assert torch.equal(got[0], want[0]) and torch.equal(got[1], want[1]), (data, seed)


def test_every_repeated_position_copies_its_source() -> None:
    for data in SETTINGS:
        b = data.draw(64, torch.Generator().manual_seed(1))
        pos = torch.arange(data.n_ctx).expand_as(b.source)
        assert b.tokens.shape == b.repeated.shape == b.source.shape == (64, data.n_ctx)
        assert torch.equal(b.tokens.gather(1, b.source), b.tokens)  # every token equals its source's
        assert torch.equal(b.source < pos, b.repeated)  # copies come from earlier; fresh tokens from themselves
        assert torch.equal(b.source == pos, ~b.repeated)
        # within a segment a copy is one contiguous earlier stretch
        inner = ~b.start[:, 1:] & b.repeated[:, 1:]
        assert torch.equal(b.source[:, 1:][inner], b.source[:, :-1][inner] + 1)
        # and the whole segment copies or none of it does
        assert not (~b.start[:, 1:] & (b.repeated[:, 1:] != b.repeated[:, :-1])).any()
        assert b.start[:, 0].all()


def expected_repeated_fraction(data: RepeatData) -> float:
    """The chance that a position is in a copying segment, by dynamic programming over where
    segments start (independent of the sampler)."""
    T, lengths = data.n_ctx, range(data.min_len, data.max_len + 1)
    start = [0.0] * (T + data.max_len + 1)
    start[0] = 1.0
    repeated = 0.0
    for p in range(T):
        for length in lengths:
            chance = start[p] / len(lengths)
            start[p + length] += chance
            n = min(length, T - p)
            if p >= n:
                repeated += chance * data.repeat_prob * n
    return repeated / T


def test_statistics_match_the_specification() -> None:
    for data in [RepeatData(), RepeatData(repeat_prob=0.8, min_len=3, max_len=9)]:
        b = data.draw(4096, torch.Generator().manual_seed(2))
        fraction = float(b.repeated.double().mean())
        assert abs(fraction - expected_repeated_fraction(data)) < 0.01, (data, fraction)
        # segment lengths: uniform on min_len..max_len, except the last one, cut at n_ctx
        starts = b.start.nonzero()
        seq, pos = starts[:, 0], starts[:, 1]
        following = torch.cat([pos[1:], torch.tensor([data.n_ctx])])
        same_seq = torch.cat([seq[1:] == seq[:-1], torch.tensor([False])])
        lengths = (following - pos)[same_seq]  # the segments that another follows: never cut
        assert int(lengths.min()) == data.min_len and int(lengths.max()) == data.max_len
        counts = torch.bincount(lengths - data.min_len).double()
        share = counts / counts.sum()
        uniform = 1 / (data.max_len - data.min_len + 1)
        assert float((share - uniform).abs().max()) < 0.15 * uniform, share


def test_seeded_deterministic_and_own_generator_only() -> None:
    data = RepeatData(repeat_prob=1.0)
    state = torch.random.get_rng_state()
    tokens, repeated = data.batch(32, torch.Generator().manual_seed(0))
    again = data.batch(32, torch.Generator().manual_seed(0))
    assert torch.equal(tokens, again[0]) and torch.equal(repeated, again[1])
    assert not torch.equal(tokens, data.batch(32, torch.Generator().manual_seed(1))[0])
    assert torch.equal(state, torch.random.get_rng_state())  # its own generator only
    assert 0.3 < float(repeated.float().mean()) < 0.9
    assert not RepeatData(repeat_prob=0.0).batch(8, torch.Generator().manual_seed(0))[1].any()


def test_repeated_random_tokens() -> None:
    probe = repeated_random_tokens(3, 5, 10, torch.Generator().manual_seed(0))
    assert probe.shape == (3, 10) and torch.equal(probe[:, :5], probe[:, 5:])


def test_the_text_corpus_is_english_by_characters() -> None:
    ids, symbols, digest = corpus(64)
    assert len(symbols) == 63 and symbols[0] == " " and set("etaoinsr") < set(symbols)
    assert len(ids) > 400_000 and int(ids.max()) == 63 and int(ids.min()) == 0
    assert float((ids == 63).double().mean()) < 1e-3  # the shared token for rare characters is rare
    assert len(digest) == 64 and corpus(64) is corpus(64)  # read once


def test_text_windows_are_seeded_and_split() -> None:
    data = TextData()
    tokens, repeated = data.batch(8, torch.Generator().manual_seed(0))
    assert tokens.shape == (8, 64) and not repeated.any()
    assert torch.equal(tokens, data.batch(8, torch.Generator().manual_seed(0))[0])
    ids = corpus(64)[0]
    cut = int(len(ids) * 0.9)
    for split, (lo, hi) in (("train", (0, cut)), ("eval", (cut, len(ids)))):
        windows, _ = TextData(split=split).batch(10, torch.Generator().manual_seed(1))
        for row in windows:  # each window is a stretch of the text inside its split
            starts = [int(i) for i in (ids[: len(ids) - 63] == row[0]).nonzero().flatten()
                      if torch.equal(ids[int(i): int(i) + 64], row)]
            assert any(lo <= i and i + 64 <= hi for i in starts), split
