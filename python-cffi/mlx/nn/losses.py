"""Loss functions of ``mlx.nn.losses`` (MLX 0.32's set, names and defaults).

``reduction`` is ``'none'`` (per-element losses), ``'mean'`` or ``'sum'``.
"""
import math
from typing import Literal, Optional, get_args

import mlx.core as mx

Reduction = Literal["none", "mean", "sum"]


def _reduce(loss: mx.array, reduction: Reduction = "none"):
    if reduction not in get_args(Reduction):
        raise ValueError(f"Invalid reduction. Must be one of {get_args(Reduction)}.")
    if reduction == "mean":
        return mx.mean(loss)
    if reduction == "sum":
        return mx.sum(loss)
    return loss


def _same_shape(a, b, what_a, what_b):
    if a.shape != b.shape:
        raise ValueError(f"{what_a} shape {a.shape} does not match {what_b} shape {b.shape}.")


def _apply_weights(loss, weights):
    if weights is None:
        return loss
    if weights.shape != loss.shape:
        raise ValueError(
            f"Weights with shape {weights.shape} is not the same as output loss with shape {loss.shape}."
        )
    return loss * weights


def cross_entropy(
    logits: mx.array,
    targets: mx.array,
    weights: Optional[mx.array] = None,
    axis: int = -1,
    label_smoothing: float = 0.0,
    reduction: Reduction = "none",
) -> mx.array:
    """Cross entropy between ``logits`` and ``targets`` — class indices (one axis fewer
    than the logits) or probabilities (same shape) — with optional per-loss ``weights`` and
    ``label_smoothing`` in ``[0, 1)``."""
    if label_smoothing < 0 or label_smoothing >= 1:
        raise ValueError(f"Label smoothing must be in [0, 1), got {label_smoothing}.")
    probs = targets.ndim == logits.ndim
    if probs:
        ok = targets.shape == logits.shape
    else:
        expected = list(logits.shape)
        expected.pop(axis)
        ok = targets.shape == tuple(expected)
    if not ok:
        raise ValueError(
            f"Targets shape {targets.shape} does not match logits shape {logits.shape}."
        )
    z = logits - mx.stop_gradient(mx.max(logits, axis=axis, keepdims=True))
    if probs:
        score = mx.sum(z * targets, axis=axis)
    else:
        score = mx.take_along_axis(z, mx.expand_dims(targets, axis), axis).squeeze(axis)
    lse = mx.logsumexp(z, axis=axis)
    if label_smoothing > 0:
        loss = lse - (1 - label_smoothing) * score + (-z.mean(axis=axis) * label_smoothing)
    else:
        loss = lse - score
    return _reduce(_apply_weights(loss, weights), reduction)


def binary_cross_entropy(
    inputs: mx.array,
    targets: mx.array,
    weights: Optional[mx.array] = None,
    with_logits: bool = True,
    reduction: Reduction = "mean",
) -> mx.array:
    """Binary cross entropy; ``inputs`` are logits (``with_logits``) or probabilities
    (their logs clipped at -100)."""
    _same_shape(inputs, targets, "Inputs", "targets")
    if with_logits:
        loss = mx.logaddexp(0.0, inputs) - inputs * targets
    else:
        log_p = mx.clip(mx.log(inputs), a_min=-100, a_max=None)
        log_q = mx.clip(mx.log(1 - inputs), a_min=-100, a_max=None)
        loss = -(targets * log_p + (1 - targets) * log_q)
    return _reduce(_apply_weights(loss, weights), reduction)


def l1_loss(predictions: mx.array, targets: mx.array, reduction: Reduction = "mean") -> mx.array:
    """Absolute error."""
    _same_shape(predictions, targets, "Predictions", "targets")
    return _reduce(mx.abs(predictions - targets), reduction)


def mse_loss(predictions: mx.array, targets: mx.array, reduction: Reduction = "mean") -> mx.array:
    """Squared error."""
    _same_shape(predictions, targets, "Predictions", "targets")
    return _reduce(mx.square(predictions - targets), reduction)


def nll_loss(inputs: mx.array, targets: mx.array, axis: int = -1, reduction: Reduction = "none") -> mx.array:
    """Negative log likelihood of the target classes given log probabilities ``inputs``."""
    picked = mx.take_along_axis(inputs, mx.expand_dims(targets, axis), axis).squeeze(axis)
    return _reduce(-picked, reduction)


def gaussian_nll_loss(
    inputs: mx.array,
    targets: mx.array,
    vars: mx.array,
    full: bool = False,
    eps: float = 1e-6,
    reduction: Reduction = "mean",
) -> mx.array:
    """Negative log likelihood of ``targets`` under normals of mean ``inputs`` and variance
    ``vars`` (clamped below at ``eps``); ``full`` adds the constant ``log(2 pi) / 2``."""
    _same_shape(inputs, targets, "Inputs", "targets")
    _same_shape(inputs, vars, "Inputs", "vars")
    v = mx.maximum(vars, eps)
    loss = 0.5 * (mx.log(v) + mx.square(targets - inputs) / v)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def kl_div_loss(inputs: mx.array, targets: mx.array, axis: int = -1, reduction: Reduction = "none") -> mx.array:
    """Kullback-Leibler divergence; both arguments are log probabilities."""
    return _reduce(mx.sum(mx.exp(targets) * (targets - inputs), axis), reduction)


def smooth_l1_loss(predictions: mx.array, targets: mx.array, beta: float = 1.0, reduction: Reduction = "mean") -> mx.array:
    """Quadratic (``0.5 d^2 / beta``) below ``beta``, linear (``d - 0.5 beta``) above."""
    _same_shape(predictions, targets, "Predictions", "targets")
    d = mx.abs(predictions - targets)
    loss = mx.where(d < beta, 0.5 * mx.square(d) / beta, mx.abs(d) - 0.5 * beta)
    return _reduce(loss, reduction)


def triplet_loss(
    anchors: mx.array,
    positives: mx.array,
    negatives: mx.array,
    axis: int = -1,
    p: int = 2,
    margin: float = 1.0,
    eps: float = 1e-6,
    reduction: Reduction = "none",
) -> mx.array:
    """``max(d(a, p) - d(a, n) + margin, 0)`` with the ``p``-norm distance along ``axis``."""

    def dist(u, v):
        return mx.power(mx.power(mx.abs(u - v), p).sum(axis) + eps, 1.0 / p)

    loss = mx.maximum(dist(anchors, positives) - dist(anchors, negatives) + margin, 0)
    return _reduce(loss, reduction)


def hinge_loss(inputs: mx.array, targets: mx.array, reduction: Reduction = "none") -> mx.array:
    """``max(1 - inputs * targets, 0)`` (targets are -1 or 1)."""
    return _reduce(mx.maximum(1 - inputs * targets, 0), reduction)


def huber_loss(inputs: mx.array, targets: mx.array, delta: float = 1.0, reduction: Reduction = "none") -> mx.array:
    """Quadratic for errors up to ``delta``, linear beyond."""
    err = mx.abs(inputs - targets)
    quad = mx.minimum(err, delta)
    return _reduce(0.5 * quad**2 + delta * (err - quad), reduction)


def log_cosh_loss(inputs: mx.array, targets: mx.array, reduction: Reduction = "none") -> mx.array:
    """``log(cosh(inputs - targets))``, computed stably."""
    e = inputs - targets
    return _reduce(mx.logaddexp(e, -e) - math.log(2), reduction)


def cosine_similarity_loss(
    x1: mx.array, x2: mx.array, axis: int = 1, eps: float = 1e-8, reduction: Reduction = "none"
) -> mx.array:
    """Cosine similarity of ``x1`` and ``x2`` along ``axis`` (norm product floored at ``eps``)."""
    n1 = mx.linalg.norm(x1, axis=axis)
    n2 = mx.linalg.norm(x2, axis=axis)
    loss = mx.sum(x1 * x2, axis=axis) / mx.maximum(n1 * n2, eps)
    return _reduce(loss, reduction)


def margin_ranking_loss(
    inputs1: mx.array,
    inputs2: mx.array,
    targets: mx.array,
    margin: float = 0.0,
    reduction: Reduction = "none",
) -> mx.array:
    """``max(0, -targets * (inputs1 - inputs2) + margin)``."""
    if not inputs1.shape == inputs2.shape == targets.shape:
        raise ValueError(
            "The shapes of the arguments do not match. The provided shapes are "
            f"inputs1.shape={inputs1.shape}, inputs2.shape={inputs2.shape}, and "
            f"targets.shape={targets.shape}."
        )
    return _reduce(mx.maximum(0, -targets * (inputs1 - inputs2) + margin), reduction)
