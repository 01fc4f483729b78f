"""Small statistics on raw samples: medians with bootstrap intervals (numpy only)."""

import numpy as np


def bootstrap_ratio_of_medians(numerator, denominator, resamples=2000, seed=0, level=0.95):
    """Median(numerator) / median(denominator) and a percentile bootstrap interval,
    resampling each sample set independently."""
    rng = np.random.default_rng(seed)
    a, b = np.asarray(numerator, float), np.asarray(denominator, float)
    ratios = (np.median(rng.choice(a, (resamples, a.size)), axis=1)
              / np.median(rng.choice(b, (resamples, b.size)), axis=1))
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(ratios, [tail, 100 - tail])
    return float(np.median(a) / np.median(b)), float(low), float(high)
