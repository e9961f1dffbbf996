"""changepoint.py — E-divisive means (Matteson & James 2014, "A nonparametric approach for multiple
change point analysis of multivariate data", JASA 109:505) on one series, with the permutation
test that decides whether a change is real. Statistics only: numbers in, numbers out, no I/O.

For a segment z_0..z_{n-1} split before index tau into X = z[:tau] (m values) and
Y = z[tau:] (k values), with alpha = 1 (absolute differences, the paper's usual choice and
MongoDB's / Otava's):

  E(X, Y) = 2/(m k) sum_{i in X, j in Y} |x_i - y_j|
            - 1/C(m,2) sum_{i<i' in X} |x_i - x_i'|  - 1/C(k,2) sum_{j<j' in Y} |y_j - y_j'|
  Q(tau)  = m k / (m + k) * E(X, Y)

E is the sample energy distance: zero in expectation when X and Y come from one distribution,
positive when their means differ. The split is the tau that maximises Q over the segment (the
paper also searches the right end kappa; like MongoDB's CI we take the whole segment,
kappa = n). Hierarchically: the segments found so far are each searched, the best split over
all of them is the candidate, and it is kept when a permutation test finds it significant:
each segment's values are shuffled within the segment, the largest Q over all segments is
taken again, R times, and p = (1 + #{shuffled max >= observed}) / (1 + R). Splitting stops at
the first candidate with p > alpha.

The effect of a change is the Hodges-Lehmann shift between the values after and before it
(median of all pairwise differences), with the distribution-free interval of Lehmann (1963) /
Moses: order statistics of the same differences at the ranks Mann-Whitney's U puts at the
interval's ends (normal approximation of U).
"""
from dataclasses import dataclass

import numpy as np
from scipy import stats

# Pairwise-distance work per numpy call: (permutations in a chunk) x n x n doubles.
_CHUNK_ELEMENTS = 2_000_000


def energy_q(x, tau):
    """Q(tau) of one split, straight from the definition (the reference the fast path is tested
    against). Needs at least 2 values on each side."""
    x = np.asarray(x, dtype=float)
    a, b = x[:tau], x[tau:]
    m, k = len(a), len(b)
    if m < 2 or k < 2:
        raise ValueError("a split needs at least 2 values on each side")
    cross = np.abs(a[:, None] - b[None, :]).sum()
    within_a = np.abs(a[:, None] - a[None, :]).sum() / 2
    within_b = np.abs(b[:, None] - b[None, :]).sum() / 2
    e = 2 * cross / (m * k) - within_a / (m * (m - 1) / 2) - within_b / (k * (k - 1) / 2)
    return m * k / (m + k) * e


def _q_from_sums(col, rowsum, min_size):
    """Q(tau) for tau in [min_size, n - min_size] from, per row, col[j] = sum_{i<j} |z_i - z_j|
    and rowsum[i] = sum_j |z_i - z_j|: with W(tau) = sum_{i<j<tau} |z_i - z_j| (the prefix sum
    of col), the cross sum is sum_{i<tau} rowsum[i] - 2 W(tau) and Y's own sum is what is left."""
    n = col.shape[1]
    taus = np.arange(min_size, n - min_size + 1)
    zero = np.zeros((col.shape[0], 1))
    within_x = np.concatenate([zero, np.cumsum(col, axis=1, dtype=float)], axis=1)
    rows = np.concatenate([zero, np.cumsum(rowsum, axis=1, dtype=float)], axis=1)
    total = within_x[:, n:n + 1]
    wx = within_x[:, taus]
    cross = rows[:, taus] - 2 * wx
    wy = total - wx - cross
    m = taus.astype(float)
    k = n - m
    e = 2 * cross / (m * k) - 2 * wx / (m * (m - 1)) - 2 * wy / (k * (k - 1))
    return taus, m * k / (m + k) * e


def _upper(n, dtype):
    return np.triu(np.ones((n, n), dtype=dtype), 1)


def q_all_splits(z, min_size):
    """Q(tau) for every tau in [min_size, n - min_size] of each row of z (shape (B, n)), from
    the distance matrix: O(n^2) per row. Returns (taus, Q of shape (B, len(taus)))."""
    z = np.atleast_2d(np.asarray(z, dtype=float))
    d = np.abs(z[:, :, None] - z[:, None, :])
    col = np.einsum("bij,ij->bj", d, _upper(z.shape[1], float))
    return _q_from_sums(col, d.sum(axis=2), min_size)


def best_split(x, min_size):
    """(tau, Q) of the segment's best split, or None when it is too short to split."""
    x = np.asarray(x, dtype=float)
    if len(x) < 2 * min_size:
        return None
    taus, q = q_all_splits(x[None, :], min_size)
    i = int(np.argmax(q[0]))
    return int(taus[i]), float(q[0, i])


# Shuffled maxima are compared with the observed Q within this relative margin: they are computed
# in single precision (a third of the time), and a shuffle that reproduces the observed split
# must count as reaching it.
_TIE = 1e-5


def _shuffled_max(x, min_size, rng, count):
    """The best split's Q of `count` shuffles of x (the permutation distribution). A value's
    summed distance to all others does not depend on the order, so only the prefix sums of
    col need the shuffled distance matrix; it is computed in single precision."""
    n = len(x)
    rowsum = np.abs(x[:, None] - x[None, :]).sum(axis=1)
    x32 = x.astype(np.float32)
    upper = _upper(n, np.float32)
    out = np.empty(count)
    chunk = max(1, _CHUNK_ELEMENTS // (n * n))
    for start in range(0, count, chunk):
        b = min(chunk, count - start)
        order = np.stack([rng.permutation(n) for _ in range(b)])
        z = x32[order]
        col = np.einsum("bij,ij->bj", np.abs(z[:, :, None] - z[:, None, :]), upper)
        out[start:start + b] = _q_from_sums(col, rowsum[order], min_size)[1].max(axis=1)
    return out


@dataclass
class Change:
    index: int   # the first value after the change
    q: float     # Q of the split where it was found
    p: float     # the permutation test's p


def e_divisive(x, alpha=0.01, permutations=199, min_size=3, seed=0):
    """The significant change points of series x, in order of index. A segment shorter than
    2 * min_size is not split. The shuffles draw from a generator seeded with `seed`, so the
    same series always gives the same answer; a test stops early once its p cannot come under
    alpha (the shuffled maxima that beat the observed one already exceed alpha * (1 + R))."""
    x = np.asarray(x, dtype=float)
    if not np.all(np.isfinite(x)):
        raise ValueError("the series holds a value that is not finite")
    rng = np.random.default_rng(seed)
    bounds = [0, len(x)]
    found = []
    limit = alpha * (1 + permutations) - 1  # more exceedances than this: p > alpha
    while True:
        segments = list(zip(bounds[:-1], bounds[1:]))
        splits = [(s, e, best_split(x[s:e], min_size)) for s, e in segments]
        splits = [(s, e, b) for s, e, b in splits if b is not None]
        if not splits:
            break
        s, e, (tau, q) = max(splits, key=lambda t: t[2][1])
        if q <= 0:
            break
        exceed, done = 0, 0
        step = 20
        while done < permutations and exceed <= limit:
            b = min(step, permutations - done)
            shuffled = np.full(b, -np.inf)
            for s2, e2, _ in splits:
                shuffled = np.maximum(shuffled, _shuffled_max(x[s2:e2], min_size, rng, b))
            exceed += int(np.sum(shuffled >= q * (1 - _TIE)))
            done += b
        p = (1 + exceed) / (1 + done)
        if exceed > limit:
            break
        found.append(Change(index=s + tau, q=q, p=p))
        bounds = sorted(bounds + [s + tau])
    return sorted(found, key=lambda c: c.index)


def hodges_lehmann_interval(before, after, confidence=0.95):
    """(shift, low, high): the median of all differences after_j - before_i, and the
    distribution-free interval of the same differences' order statistics d_(C) and
    d_(mn+1-C), C = floor(mn/2 - z sqrt(mn(m+n+1)/12)) (at least 1)."""
    a = np.asarray(before, dtype=float)
    b = np.asarray(after, dtype=float)
    if len(a) == 0 or len(b) == 0:
        raise ValueError("both sides need values")
    d = np.sort(np.subtract.outer(b, a).ravel())
    m, n = len(a), len(b)
    z = stats.norm.ppf(0.5 + confidence / 2)
    c = int(np.floor(m * n / 2 - z * np.sqrt(m * n * (m + n + 1) / 12)))
    c = max(c, 1)
    return float(np.median(d)), float(d[c - 1]), float(d[m * n - c])
