"""Figures for the claims' pages: PNGs (matplotlib, Agg backend), fixed file names.

They are drawn at twice a screen's resolution with fonts that stay legible when a page shows
them at its column's width, and on fixed colour scales: a run and its controls are drawn
separately, so only a scale fixed by what the quantity can be lets them be compared."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from torch import Tensor

DPI = 200
plt.rcParams.update({"font.size": 9, "axes.titlesize": 9, "axes.labelsize": 9, "xtick.labelsize": 8,
                     "ytick.labelsize": 8, "legend.fontsize": 8})
COMPOSITION_MAX = 0.5  # composition scores lie in [0, 1]; a trained induction circuit's are below this


def patterns(path: Path, panels: Sequence[tuple[str, Tensor]]) -> Path:
    """Attention patterns side by side: each panel a (query_pos, key_pos) matrix and its title."""
    fig, axes = plt.subplots(1, len(panels), figsize=(3.0 * len(panels), 3.0), squeeze=False,
                             layout="constrained")
    for ax, (title, pattern) in zip(axes[0], panels, strict=True):
        ax.imshow(pattern.detach().cpu().numpy(), cmap="Blues", vmin=0.0, vmax=1.0, aspect="auto")
        ax.set_title(title, wrap=True)
        ax.set_xlabel("key position")
        ax.set_ylabel("query position")
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path


def composition(path: Path, scores: dict[str, Tensor], baseline: float) -> Path:
    """Q-, K- and V-composition matrices (layer-1 head x layer-0 head) on one fixed scale, with
    the random baseline marked on it."""
    fig, axes = plt.subplots(1, len(scores), figsize=(2.6 * len(scores) + 1.0, 2.8), squeeze=False,
                             layout="constrained")
    image = None
    for ax, (name, s) in zip(axes[0], scores.items(), strict=True):
        image = ax.imshow(s.detach().cpu().numpy(), cmap="viridis", vmin=0.0, vmax=COMPOSITION_MAX)
        ax.set_title(f"{name}-composition")
        ax.set_xlabel("layer-0 head")
        ax.set_ylabel("layer-1 head")
        ax.set_xticks(range(s.shape[1]))
        ax.set_yticks(range(s.shape[0]))
    if image is not None:
        cbar = fig.colorbar(image, ax=list(axes[0]), shrink=0.9, extend="max")
        cbar.ax.axhline(baseline, color="red", linewidth=1.5)
        cbar.set_label(f"score (red: random baseline {baseline:.3f})")
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
    fig, ax = plt.subplots(figsize=(4.5, 3.0), layout="constrained")
    ax.plot(steps, loss, label="training loss", linewidth=1.0)
    if eval_steps:
        ax.plot(eval_steps, eval_repeat_loss, label="repeated tokens (eval)", linewidth=1.0)
    ax.set_xlabel("step")
    ax.set_ylabel("cross-entropy (nats)")
    ax.legend()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path
