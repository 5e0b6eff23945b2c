"""A binary min-heap of (key, value) pairs in two int64 arrays, for compiled searches.

Entries order by key, then by value (a node id), so a search's order, and what it finds when a
limit cuts it short, is the same for the same graph. :func:`put` adds an entry in place where the
caller knows there is room (a search's hot loop: returning the arrays there cost the contraction's
witness searches 30 %); :func:`push` grows the arrays when full and returns them.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def _less(ka, va, kb, vb):  # pragma: no cover - compiled
    return ka < kb or (ka == kb and va < vb)


@numba.njit(cache=True, nogil=True, inline="always")
def push(hk, hv, hs, key, val):  # pragma: no cover - compiled
    """Push (key, val) on the heap of ``hs`` entries; returns the heap (grown when full) and its
    new size."""
    if hs == hk.size:
        hk = np.concatenate((hk, np.empty(max(hs, 16), np.int64)))
        hv = np.concatenate((hv, np.empty(max(hs, 16), np.int64)))
    put(hk, hv, hs, key, val)
    return hk, hv, hs + 1


@numba.njit(cache=True, nogil=True, inline="always")
def put(hk, hv, hs, key, val):  # pragma: no cover - compiled
    """Add (key, val) to the heap of ``hs < hk.size`` entries, in place (it then has ``hs + 1``)."""
    i = hs
    while i > 0:
        p = (i - 1) // 2
        if not _less(key, val, hk[p], hv[p]):
            break
        hk[i] = hk[p]
        hv[i] = hv[p]
        i = p
    hk[i] = key
    hv[i] = val


@numba.njit(cache=True, nogil=True, inline="always")
def pop(hk, hv, hs):  # pragma: no cover - compiled
    """The least (key, val) of the heap of ``hs >= 1`` entries, removed; returns it and the new
    size."""
    key, val = hk[0], hv[0]
    hs -= 1
    k, v = hk[hs], hv[hs]  # the last entry, sifted down from the root
    i = 0
    while True:
        c = 2 * i + 1
        if c >= hs:
            break
        if c + 1 < hs and _less(hk[c + 1], hv[c + 1], hk[c], hv[c]):
            c += 1
        if not _less(hk[c], hv[c], k, v):
            break
        hk[i] = hk[c]
        hv[i] = hv[c]
        i = c
    if hs > 0:
        hk[i] = k
        hv[i] = v
    return key, val, hs
