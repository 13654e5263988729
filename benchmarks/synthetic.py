"""A generator of synthetic records, for benchmarks: N entries with realistic links and prose.

    python benchmarks/synthetic.py OUT_DIR N [--seed S] [--plain]

Writes OUT_DIR/pyproject.toml (with [tool.recordtool]) and OUT_DIR/record/<folder>/<ID>.yaml.
The mix is 30% literature, 30% notes, 40% claims; each entry cites one to four earlier entries
with a typed relation, and now and then has an id inside a code span (which is not a mention).

Bodies are ordinary research Markdown by default ("realistic" mode): 1 to 4 KB each of
headings, paragraphs with emphasis, links, inline code and inline math, bullet and numbered
lists, block quotes, small tables and fenced code, with two to eight ids mentioned in the prose
(about 15% of entries mention one id that is not in the record). ``--plain`` writes the old
bodies instead: two paragraphs of plain sentences with two to five mentions, which parse on a
fast path of their own and so understate what a real record costs. Benchmarks say which mode
they ran (``MODES``).
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

WORDS = ["attention", "head", "circuit", "residual", "stream", "token", "position", "layer", "path", "composition", "induction", "previous", "copying", "eigenvalue", "matrix", "query", "key", "value", "output", "embedding", "unembedding", "model", "training", "loss", "gradient", "feature", "superposition", "neuron", "activation", "probe", "ablation", "patching", "logit", "score", "pattern", "virtual", "direct", "bilinear", "rank", "norm", "bias", "softmax", "context", "sequence"]
TAGS = [f"topic-{i}" for i in range(40)] + ["induction-heads", "attention", "composition", "anthology-candidate"]
KINDS = (("LIT", "literature", "literature", 0.3), ("NOTE", "note", "notes", 0.3), ("THEORY", "theory", "theory", 0.4))
RELATIONS = {"LIT": ["extends", "contradicts", "supports"], "NOTE": ["paper"], "THEORY": ["source", "uses", "refines"]}

PYPROJECT = """[tool.recordtool]
record = "record"
checks = "checks"

[tool.recordtool.kinds]
LIT = { kind = "literature", folder = "literature" }
NOTE = { kind = "note", folder = "notes" }
THEORY = { kind = "theory", folder = "theory" }
"""


# The check that one claim in ten names (``checks.toy:measure``): a benchmark that verifies the
# record writes it to checks/toy.py first. Fast, and always the same. Like a real check, each run
# leaves figures as evidence (two PNGs of about 25 KB, as the shipped record's are, with a title
# and a caption), so that a render of a verified record copies figures as a real one does.
TOY_CHECK = '''"""A toy check: fast and always the same; each run leaves two small figures."""

import random
import struct
import zlib

METRICS = ("error",)


def _png(path, seed: int, width: int = 160, height: int = 120) -> None:
    """A PNG of ``width`` x ``height`` (RGB): noise in two rows of five, blank elsewhere."""
    rng = random.Random(seed)
    rows = []
    for y in range(height):
        row = bytes(rng.getrandbits(8) for _ in range(3 * width)) if y % 5 < 2 else bytes(3 * width)
        rows.append(b"\\0" + row)

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    path.write_bytes(b"\\x89PNG\\r\\n\\x1a\\n" + chunk(b"IHDR", header)
                     + chunk(b"IDAT", zlib.compress(b"".join(rows), 9)) + chunk(b"IEND", b""))


def measure(ctx, *, size: int = 1, noise: bool = False) -> dict[str, float]:
    for n, name in enumerate(("error.png", "trace.png")):
        _png(ctx.figure(name, title=f"The {name[:-4]} at size {size}",
                        caption="A toy figure: noise in two rows of five."), ctx.seed * 1000 + size * 10 + n + noise)
    return {"error": 1.0 if noise else 0.0}
'''


def _q(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _sentence(rng: random.Random, mention: str | None = None) -> str:
    words = rng.choices(WORDS, k=rng.randint(8, 18))
    if mention:
        words.insert(rng.randint(1, len(words) - 1), mention)
    return words[0].capitalize() + " " + " ".join(words[1:]) + "."


def _prose(rng: random.Random, mentions: list[str], code_id: str | None) -> str:
    sentences = [_sentence(rng) for _ in range(rng.randint(4, 7))]
    for mention in mentions:
        sentences.insert(rng.randint(0, len(sentences)), _sentence(rng, mention))
    if code_id:
        sentences.append(f"The id `{code_id}` in code is not a mention.")
    half = len(sentences) // 2
    return " ".join(sentences[:half]) + "\n\n" + " ".join(sentences[half:])


MODES = {False: "realistic Markdown", True: "plain sentences"}  # by ``plain``
SYMBOLS = ["W_{OV}", "W_{QK}", "W_O W_V", "\\lambda_i", "A^{h}", "x_{t-1}", "\\sum_h A^h", "\\|W\\|_F"]
CODE = ["ctx.seed", "model.blocks[0]", "torch.einsum", "W_QK", "attn_only=True", "n_heads=4", "lr=1e-3",
        "cache['pattern']", "seq_len", "layer_norm=False"]
SNIPPETS = [
    ["scores = q @ k.transpose(-2, -1) / math.sqrt(d_head)", "pattern = scores.softmax(dim=-1)",
     "out = pattern @ v"],
    ["def composition(w_a, w_b):", "    num = (w_a @ w_b).norm()", "    return num / (w_a.norm() * w_b.norm())"],
    ["for step in range(steps):", "    loss = model(batch).loss", "    loss.backward()", "    opt.step()",
     "    opt.zero_grad()"],
    ["eig = torch.linalg.eigvals(w_ov)", "ratio = eig.real.sum() / eig.abs().sum()", "print(f\"{ratio:.3f}\")"],
]


def _words(rng: random.Random, lo: int, hi: int) -> str:
    return " ".join(rng.choices(WORDS, k=rng.randint(lo, hi)))


def _rich_sentence(rng: random.Random, mention: str | None = None) -> str:
    """A sentence with, now and then, emphasis, a link, inline code or inline math."""
    words = rng.choices(WORDS, k=rng.randint(8, 18))
    for _ in range(rng.randint(0, 2)):
        i = rng.randrange(1, len(words))
        kind = rng.random()
        if kind < 0.3:
            words[i] = f"*{words[i]}*" if rng.random() < 0.6 else f"**{words[i]}**"
        elif kind < 0.5:
            words[i] = f"[{words[i]} {rng.choice(WORDS)}](https://example.org/{rng.choice(WORDS)}/{rng.randint(1, 999)})"
        elif kind < 0.75:
            words[i] = f"`{rng.choice(CODE)}`"
        else:
            words[i] = f"${rng.choice(SYMBOLS)}$"
    if mention:
        words.insert(rng.randint(1, len(words) - 1), mention)
    text = " ".join(words)
    return text[0].upper() + text[1:] + "."


def _markdown(rng: random.Random, mentions: list[str], code_id: str | None) -> str:
    """A research note in Markdown of 1 to 4 KB, with every id of ``mentions`` in its prose."""
    target = rng.randint(1024, 3584)  # the last block may add half a kilobyte
    todo = list(mentions)
    rng.shuffle(todo)

    def take() -> str | None:
        return todo.pop() if todo and rng.random() < 0.5 else None

    blocks: list[str] = []
    size = 0
    while size < target or todo:
        kind = rng.random()
        if kind < 0.12 and (not blocks or not blocks[-1].startswith("#")):
            block = f"{'#' * rng.choice([2, 2, 3])} {_words(rng, 2, 5).capitalize()}"
        elif kind < 0.45:
            block = " ".join(_rich_sentence(rng, take()) for _ in range(rng.randint(2, 5)))
        elif kind < 0.57:
            block = "\n".join(f"- {_rich_sentence(rng, take())}" for _ in range(rng.randint(2, 5)))
        elif kind < 0.67:
            block = "\n".join(f"{i}. {_rich_sentence(rng, take())}" for i in range(1, rng.randint(3, 6)))
        elif kind < 0.75:
            block = "\n".join(f"> {_rich_sentence(rng, take())}" for _ in range(rng.randint(1, 3)))
        elif kind < 0.85:
            rows = ["| metric | value | note |", "| --- | ---: | --- |"]
            for _ in range(rng.randint(2, 4)):
                note = take() or _words(rng, 1, 3)
                rows.append(f"| {rng.choice(WORDS)} {rng.choice(WORDS)} | {rng.uniform(0, 10):.3f} | {note} |")
            block = "\n".join(rows)
        elif kind < 0.93:
            block = "\n".join(["```python", *rng.choice(SNIPPETS), "```"])
        else:
            block = " ".join(_rich_sentence(rng, todo.pop() if todo else None) for _ in range(rng.randint(1, 3)))
        blocks.append(block)
        size += len(block) + 2
    if code_id:
        blocks.append(f"The id `{code_id}` in code is not a mention.")
    return "\n\n".join(blocks)


def generate_record(root: Path, n: int, seed: int = 0, *, plain: bool = False) -> None:
    """Write a synthetic project of ``n`` entries under ``root``: bodies of research Markdown,
    or of plain sentences with ``plain``."""
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    counters = {prefix: 0 for prefix, *_ in KINDS}
    ids: list[str] = []
    for _prefix, _kind, folder, _share in KINDS:
        (root / "record" / folder).mkdir(parents=True, exist_ok=True)
    for _ in range(n):
        prefix, kind, folder, _share = rng.choices(KINDS, weights=[k[3] for k in KINDS])[0]
        counters[prefix] += 1
        entry_id = f"{prefix}-{counters[prefix]}"
        cited = rng.sample(ids, k=min(len(ids), rng.randint(1, 4))) if ids else []
        cited = [c for c in cited if not (prefix == "NOTE" and not c.startswith("LIT"))] or cited[:1]
        mentions = rng.sample(ids, k=min(len(ids), rng.randint(2, 5) if plain else rng.randint(2, 8))) if ids else []
        if rng.random() < 0.15:
            mentions.append(f"THEORY-{10 * n + rng.randint(1, 50)}")  # dangling
        code_id = rng.choice(ids) if ids and rng.random() < 0.1 else None
        lines = [
            f"id: {entry_id}",
            f"kind: {kind}",
            f"title: {_q(' '.join(rng.choices(WORDS, k=rng.randint(4, 9))).capitalize())}",
            f"status: {rng.choice(['active', 'active', 'active', 'draft', 'superseded'])}",
            f"version: {rng.randint(1, 3)}",
            f"tags: [{', '.join(sorted(set(rng.sample(TAGS, k=rng.randint(1, 3)))))}]",
            f"created: 2026-{rng.randint(1, 10):02d}-{rng.randint(1, 28):02d}",
            "cites:",
            *[f"  - {{id: {c}, as: {rng.choice(RELATIONS[prefix])}}}" for c in cited],
        ]
        if not cited:
            lines[-1] = "cites: []"
        if prefix == "LIT":
            lines += [
                "reference:",
                f"  authors: [{_q('Author, A.')}, {_q('Writer, B.')}]",
                f"  year: {rng.randint(1990, 2026)}",
                f"  title: {_q(' '.join(rng.choices(WORDS, k=6)))}",
                "  venue: Synthetic Proceedings",
                f"  url: https://example.org/{entry_id}",
            ]
        if prefix == "THEORY":
            lines += ["statement: >-", "  " + _sentence(rng, rng.choice(mentions) if mentions else None)]
            if rng.random() < 0.1:
                lines += [
                    "checks:",
                    "  - name: toy",
                    "    run: checks.toy:measure",
                    f"    params: {{size: {rng.randint(1, 9)}}}",
                    "    expect: {error: \"< 1e-9\"}",
                    "    control: {params: {noise: true}}",
                ]
        body = _prose(rng, mentions, code_id) if plain else _markdown(rng, mentions, code_id)
        lines += ["body: |", *["  " + line if line else "" for line in body.splitlines()]]
        (root / "record" / folder / f"{entry_id}.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
        ids.append(entry_id)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    parser.add_argument("n", type=int)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--plain", action="store_true",
                        help="bodies of plain sentences (a fast path of the parser) instead of research Markdown")
    args = parser.parse_args()
    generate_record(args.out, args.n, args.seed, plain=args.plain)
    print(f"{args.n} entries ({MODES[args.plain]}) in {args.out}")


if __name__ == "__main__":
    main()
