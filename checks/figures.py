"""Figures for the claims' pages: small PNGs (matplotlib, Agg backend), fixed file names."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from torch import Tensor

DPI = 100


def patterns(path: Path, panels: Sequence[tuple[str, Tensor]], tokens_shown: int = 32) -> Path:
    """Attention patterns side by side: each panel a (query_pos, key_pos) matrix and its title,
    cropped to the last ``tokens_shown`` queries and every key."""
    fig, axes = plt.subplots(1, len(panels), figsize=(3.2 * len(panels), 3.0), squeeze=False)
    for ax, (title, pattern) in zip(axes[0], panels, strict=True):
        ax.imshow(pattern.detach().cpu().numpy(), cmap="Blues", vmin=0.0, vmax=1.0, aspect="auto")
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("key position", fontsize=8)
        ax.set_ylabel("query position", fontsize=8)
        ax.tick_params(labelsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path


def composition(path: Path, scores: dict[str, Tensor], baseline: float) -> Path:
    """Q-, K- and V-composition matrices (layer-1 head x layer-0 head), with the random baseline."""
    fig, axes = plt.subplots(1, len(scores), figsize=(3.2 * len(scores), 3.0), squeeze=False)
    vmax = max(float(s.max()) for s in scores.values())
    image = None
    for ax, (name, s) in zip(axes[0], scores.items(), strict=True):
        image = ax.imshow(s.detach().cpu().numpy(), cmap="viridis", vmin=0.0, vmax=vmax)
        ax.set_title(f"{name}-composition", fontsize=9)
        ax.set_xlabel("layer-0 head", fontsize=8)
        ax.set_ylabel("layer-1 head", fontsize=8)
        ax.set_xticks(range(s.shape[1]))
        ax.set_yticks(range(s.shape[0]))
        ax.tick_params(labelsize=7)
    if image is not None:
        cbar = fig.colorbar(image, ax=list(axes[0]), shrink=0.8)
        cbar.ax.axhline(baseline, color="red", linewidth=1.0)
        cbar.set_label(f"score (red: random baseline {baseline:.3f})", fontsize=8)
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path


def loss_curve(
    path: Path,
    steps: Sequence[int],
    loss: Sequence[float],
    eval_steps: Sequence[int] = (),
    eval_repeat_loss: Sequence[float] = (),
) -> Path:
    """The training loss, and the loss on the predictable repeated tokens."""
    fig, ax = plt.subplots(figsize=(4.5, 3.0))
    ax.plot(steps, loss, label="training loss", linewidth=1.0)
    if eval_steps:
        ax.plot(eval_steps, eval_repeat_loss, label="repeated tokens (eval)", linewidth=1.0)
    ax.set_xlabel("step", fontsize=8)
    ax.set_ylabel("cross-entropy (nats)", fontsize=8)
    ax.tick_params(labelsize=7)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path
