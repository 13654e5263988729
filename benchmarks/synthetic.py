"""A generator of synthetic records, for benchmarks: N entries with realistic links.

    python benchmarks/synthetic.py OUT_DIR N [--seed S]

Writes OUT_DIR/pyproject.toml (with [tool.recordtool]) and OUT_DIR/record/<folder>/<ID>.yaml.
The mix is 30% literature, 30% notes, 40% claims; each entry cites one to four earlier entries
with a typed relation and mentions two to five ids in its prose, about 3% of them dangling,
and now and then an id inside a code span (which is not a mention).
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


def generate_record(root: Path, n: int, seed: int = 0) -> None:
    """Write a synthetic project of ``n`` entries under ``root``."""
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
        mentions = rng.sample(ids, k=min(len(ids), rng.randint(2, 5))) if ids else []
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
        body = _prose(rng, mentions, code_id)
        lines += ["body: |", *["  " + line if line else "" for line in body.splitlines()]]
        (root / "record" / folder / f"{entry_id}.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
        ids.append(entry_id)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    parser.add_argument("n", type=int)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    generate_record(args.out, args.n, args.seed)


if __name__ == "__main__":
    main()
