"""changepoint.py — E-divisive means (Matteson & James 2014, "A nonparametric approach for multiple
change point analysis of multivariate data", JASA 109:505) on one series, with the permutation
test that decides whether a change is real. Statistics only: numbers in, numbers out, no I/O.

For a segment z_0..z_{n-1} split before index tau into X = z[:tau] (m values) and
Y = z[tau:kappa] (k values), with alpha = 1 (absolute differences, the paper's usual choice and
MongoDB's / Otava's):

  E(X, Y) = 2/(m k) sum_{i in X, j in Y} |x_i - y_j|
            - 1/C(m,2) sum_{i<i' in X} |x_i - x_i'|  - 1/C(k,2) sum_{j<j' in Y} |y_j - y_j'|
  Q(tau)  = m k / (m + k) * E(X, Y)

E is the sample energy distance: zero in expectation when X and Y come from one distribution,
positive when their means differ. The split is the (tau, kappa) that maximises Q over the
segment with Y = z[tau:kappa] (the paper's right end kappa: without it a dip that recovers
inside the segment hides, since the recovered values dilute Y); tau is the change found. Hierarchically: the segments found so far are each searched, the best split over
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


def energy_q(x, tau, kappa=None):
    """Q of X = x[:tau] against Y = x[tau:kappa] (kappa: the end), straight from the definition
    (the reference the fast path is tested against). Needs at least 2 values on each side."""
    x = np.asarray(x, dtype=float)
    a, b = x[:tau], x[tau:kappa]
    m, k = len(a), len(b)
    if m < 2 or k < 2:
        raise ValueError("a split needs at least 2 values on each side")
    cross = np.abs(a[:, None] - b[None, :]).sum()
    within_a = np.abs(a[:, None] - a[None, :]).sum() / 2
    within_b = np.abs(b[:, None] - b[None, :]).sum() / 2
    e = 2 * cross / (m * k) - within_a / (m * (m - 1) / 2) - within_b / (k * (k - 1) / 2)
    return m * k / (m + k) * e


def _coefficients(n, min_size):
    """Q(tau, kappa) = A S[tau, kappa] + B S[tau, tau] + C S[kappa, kappa] (+ -inf where
    kappa - tau < min_size): the definition's terms with m = tau, k = kappa - tau and
    f = m k / (m + k) gathered per prefix sum,
      A = f (2/(m k) + 2/(k (k-1))),  B = -f (2/(m k) + 1/(m (m-1)) + 1/(k (k-1))),
      C = -f / (k (k-1))."""
    taus = np.arange(min_size, n - min_size + 1)
    kappas = np.arange(2 * min_size, n + 1)
    m = taus[:, None].astype(float)
    k = (kappas[None, :] - taus[:, None]).astype(float)
    valid = k >= min_size
    k = np.where(valid, k, 2.0)  # any k > 1 where invalid: masked by `mask`
    f = m * k / (m + k)
    a = f * (2 / (m * k) + 2 / (k * (k - 1)))
    b = -f * (2 / (m * k) + 1 / (m * (m - 1)) + 1 / (k * (k - 1)))
    c = -f / (k * (k - 1))
    mask = np.where(valid, 0.0, -np.inf)
    return taus, kappas, np.where(valid, a, 0), np.where(valid, b, 0), np.where(valid, c, 0), mask


def q_grid(z, min_size):
    """Q(tau, kappa) of each row of z (shape (B, n)) for every tau >= min_size and kappa with
    kappa - tau >= min_size, from the 2-D prefix sums S[a, b] = sum_{i<a, j<b} |z_i - z_j|:
      within X = S[tau, tau] / 2,  cross = S[tau, kappa] - S[tau, tau],
      within Y = (S[kappa, kappa] - 2 S[tau, kappa] + S[tau, tau]) / 2
    (_coefficients gathers the terms). O(n^2) per row. Returns (taus, kappas, Q of shape
    (B, len(taus), len(kappas))), -inf where kappa - tau < min_size."""
    z = np.atleast_2d(np.asarray(z, dtype=float))
    n = z.shape[1]
    taus, kappas, a, b, c, mask = _coefficients(n, min_size)
    # S[a, b] for a, b >= 1 is s[a-1, b-1]; S[0, .] = 0 is never needed (tau, kappa >= 2).
    s = np.abs(z[:, :, None] - z[:, None, :])
    np.cumsum(s, axis=1, out=s)
    np.cumsum(s, axis=2, out=s)
    diag = np.diagonal(s, axis1=1, axis2=2)
    s_tk = s[:, taus[0] - 1:taus[-1], kappas[0] - 1:]
    q = a * s_tk
    q += b * diag[:, taus[0] - 1:taus[-1], None]
    q += c * diag[:, None, kappas[0] - 1:]
    q += mask
    return taus, kappas, q


def best_split(x, min_size):
    """(tau, Q) of the segment's best split, or None when it is too short to split."""
    x = np.asarray(x, dtype=float)
    if len(x) < 2 * min_size:
        return None
    taus, kappas, q = q_grid(x[None, :], min_size)
    i, j = np.unravel_index(int(np.argmax(q[0])), q[0].shape)
    return int(taus[i]), float(q[0, i, j])


# Shuffled maxima are compared with the observed Q within this relative margin, so a shuffle
# that reproduces the observed split counts as reaching it whatever the rounding.
_TIE = 1e-9


def _shuffled_max(x, min_size, rng, count):
    """The best split's Q of `count` shuffles of x (the permutation distribution)."""
    n = len(x)
    out = np.empty(count)
    chunk = max(1, _CHUNK_ELEMENTS // (n * n))
    for start in range(0, count, chunk):
        b = min(chunk, count - start)
        z = np.stack([rng.permutation(x) for _ in range(b)])
        out[start:start + b] = q_grid(z, min_size)[2].reshape(b, -1).max(axis=1)
    return out


@dataclass
class Change:
    index: int   # the first value after the change
    q: float     # Q of the split where it was found
    p: float     # the permutation test's p


def e_divisive(x, alpha=0.01, permutations=99, min_size=3, seed=0):
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
        step = 5  # doubling: most candidates of a flat series are beaten within the first few
        while done < permutations and exceed <= limit:
            b = min(step, permutations - done)
            step *= 2
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
