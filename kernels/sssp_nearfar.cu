// ---- near-far (Δ-stepping) on the same engine --------------------------------------------------
// Meyer and Sanders' Δ-stepping with the two piles of Davidson et al. (IPDPS 2014), label
// correcting, in one persistent launch. The CPU reference is sssp/cpu/nearfar.py; this version
// runs the same steps and raises, except that a list entry pushes the distance its node has when
// the step reaches it (a concurrent step may already have lowered it: fewer pushes, never a
// wrong distance), so its step and raise counts can differ a little from the reference's.
//   step k   the near list L_k (nodes lowered in step k-1, each once) is walked: a node already
//            pushed at its current distance is skipped; one at or above the threshold T goes
//            to the far pile (once: the `infar` flag) and folds its distance into the pile's
//            minimum; every other one records its distance in `pushed` and pushes d + w along
//            its out-edges. A target whose distance falls is appended to L_{k+1} (once per
//            step: its stamp in settled_at).
//   raise    when L_{k+1} is empty: T becomes the smallest multiple of Δ above the far pile's
//            minimum, and one pass splits the pile: live entries below T form L_{k+1}, the rest
//            a new pile (and its exact minimum); entries whose node was pushed at its current
//            distance are dropped. Empty buckets cost nothing; a minimum that came from an
//            entry since gone stale costs one more raise.
// Steps and raises whose work is small (|L| times the mean degree, or the pile's size, at most
// local_limit) run in block 0 alone with block barriers, the grid waiting at its barrier, as in
// Crauser's block-local phases. The predecessor tree is built afterwards (sssp_nf_tree).
//
// Counters (cnt) and minima (thr) sit in small rings, so that a slot is cleared one barrier after
// its last reader and one before its next writer. |L| is indexed by the move m = (k - 1) + r
// (steps and raises so far): move m reads slot m % 3, fills (m + 1) % 3 and clears (m + 2) % 3,
// so the slot every block reads to choose the move is never written during it.
//   cnt[0..2]  |L| by move % 3        cnt[3..5]  far pile size by raise % 3
//   cnt[6]     largest |L|            cnt[8..9]  Σ|L| over the steps (64-bit)
//   thr[0]     T at a hand-over       thr[1..3]  far pile minimum by raise % 3
// ctrl[0] the next step, [1] done, [2..3] grid barrier, [4] raises, [5] abort, [6] step limit,
// [7] blocks that have read the ring before a block-local run (sssp_nf_readers_done).
//
// Every block reads |L| (and, when it is 0, the pile's size) right after a grid barrier to
// choose the next move; a grid step or raise never writes the slots being read (a step adds to
// the pile, but a step is chosen only when |L| > 0, and then no block reads the pile's size). A block-local
// run does, after a few steps, so block 0 first waits until every block has read them.
#define SSSP_NF_ARGS SSSP_ARGS, sssp_bits_t *pushed, int *infar
#define SSSP_NF_PASS SSSP_PASS, pushed, infar
#define SSSP_NF_L 0
#define SSSP_NF_FAR 3
#define SSSP_NF_MAXL 6
#define SSSP_NF_SUM 8
#define SSSP_NF_T 0
#define SSSP_NF_FMIN 1
#define SSSP_NF_WORDS 12

__device__ __forceinline__ sssp_key_t sssp_nf_key(sssp_d_t d) {
#if SSSP_PACKED
    return ((sssp_key_t)d << 32) | SSSP_NO_PRED;  // the predecessor is filled in by sssp_nf_tree
#else
    return sssp_bits(d);
#endif
}

// Δ arrives as 64 bits: a float64's bits for float distances, else an integer (saturated here).
__device__ __forceinline__ sssp_d_t sssp_nf_delta(unsigned long long bits) {
#if SSSP_FLOAT
    return __longlong_as_double((long long)bits);
#else
    return bits >= (unsigned long long)SSSP_INF_BITS ? (sssp_d_t)SSSP_INF_BITS : (sssp_d_t)bits;
#endif
}

// The smallest multiple of Δ above dmin (the reference's _next_threshold): infinite when it would
// not fit; with real Δ below the float spacing at dmin, the next float above dmin.
__device__ __forceinline__ sssp_d_t sssp_nf_threshold(sssp_d_t dmin, sssp_d_t delta) {
#if SSSP_FLOAT
    if (isinf(delta)) return delta;
    const double q = floor(dmin / delta);
    if (isinf(q)) return nextafter(dmin, sssp_val(SSSP_INF_BITS));
    const double t = q * delta + delta;
    return t > dmin ? t : nextafter(dmin, sssp_val(SSSP_INF_BITS));
#else
    if (delta == (sssp_d_t)SSSP_INF_BITS) return delta;
    const sssp_d_t base = (dmin / delta) * delta;
    return base > (sssp_d_t)SSSP_INF_BITS - delta ? (sssp_d_t)SSSP_INF_BITS : base + delta;
#endif
}

__device__ __forceinline__ int sssp_nf_move(int k, int r) { return (k - 1 + r) % 3; }

__device__ void sssp_nf_step(SSSP_NF_ARGS, int k, int r, sssp_d_t T, long long tid, long long nthreads) {
    const int m = sssp_nf_move(k, r);
    const unsigned int nl = sssp_ldcg(cnt + SSSP_NF_L + m);
    if (tid == 0) {
        cnt[SSSP_NF_L + (m + 2) % 3] = 0;  // read by move m - 1, written from move m + 1 on
        atomicMax(cnt + SSSP_NF_MAXL, nl);
        atomicAdd(reinterpret_cast<unsigned long long *>(cnt + SSSP_NF_SUM), (unsigned long long)nl);
    }
    const int *L = qF + (long long)(k & 1) * n;
    int *next = qF + (long long)((k + 1) & 1) * n;
    unsigned int *next_count = cnt + SSSP_NF_L + (m + 1) % 3;
    int *far = qR + (long long)(r & 1) * n;
    unsigned int *far_count = cnt + SSSP_NF_FAR + r % 3;
    sssp_bits_t fmin = SSSP_INF_BITS;
    sssp_walk(
        indptr, nl, tid, nthreads,
        [&](long long i, int &u, sssp_bits_t &db) {
            const int v = sssp_ldcg(L + i);
            const sssp_d_t d = sssp_dist_of(key, v);
            db = sssp_bits(d);
            if (db >= sssp_ldcg(pushed + v)) return;  // pushed at this distance already
            if (!(d < T)) {
                fmin = sssp_min_bits(fmin, db);
                if (sssp_ldcg(infar + v) == 0 && atomicExch(infar + v, 1) == 0) far[sssp_append_slot(far_count)] = v;
                return;
            }
            __stcg(pushed + v, db);
            u = v;
        },
        [&](long long e, int u, sssp_d_t du) {
            const int t = __ldg(indices + e);
            const sssp_key_t kt = sssp_nf_key(sssp_add(du, (sssp_d_t)__ldg(weights + e)));
            if (kt >= sssp_ldcg(key + t) || kt >= atomicMin(key + t, kt)) return;
            if (sssp_ldcg(settled_at + t) != k + 1 && atomicExch(settled_at + t, k + 1) != k + 1)
                next[sssp_append_slot(next_count)] = t;
        });
    sssp_fold_min(thr + SSSP_NF_FMIN + r % 3, fmin);
}

__device__ void sssp_nf_raise(SSSP_NF_ARGS, int k, int r, sssp_d_t T, long long tid, long long nthreads) {
    const unsigned int nfar = sssp_ldcg(cnt + SSSP_NF_FAR + r % 3);
    const int m = sssp_nf_move(k, r);
    if (tid == 0) {  // read by raise r - 1 (move m - 1), written from raise r + 1 (move m + 1) on
        cnt[SSSP_NF_L + (m + 2) % 3] = 0;
        cnt[SSSP_NF_FAR + (r + 2) % 3] = 0;
        thr[SSSP_NF_FMIN + (r + 2) % 3] = SSSP_INF_BITS;
    }
    const int *far = qR + (long long)(r & 1) * n;
    int *kept = qR + (long long)((r + 1) & 1) * n;
    unsigned int *kept_count = cnt + SSSP_NF_FAR + (r + 1) % 3;
    int *L = qF + (long long)(k & 1) * n;
    unsigned int *L_count = cnt + SSSP_NF_L + (m + 1) % 3;
    sssp_bits_t fmin = SSSP_INF_BITS;
    for (long long i = tid; i < nfar; i += nthreads) {
        const int v = sssp_ldcg(far + i);
        const sssp_d_t d = sssp_dist_of(key, v);
        const sssp_bits_t db = sssp_bits(d);
        if (db >= sssp_ldcg(pushed + v)) {
            __stcg(infar + v, 0);  // stale: pushed at this distance since
        } else if (d < T) {
            __stcg(infar + v, 0);
            L[sssp_append_slot(L_count)] = v;
        } else {
            kept[sssp_append_slot(kept_count)] = v;
            fmin = sssp_min_bits(fmin, db);
        }
    }
    sssp_fold_min(thr + SSSP_NF_FMIN + (r + 1) % 3, fmin);
}

// Does the next step (nl > 0) or raise (nl == 0, pile of nfar) stay in one block?
__device__ __forceinline__ bool sssp_nf_small(unsigned int nl, unsigned int nfar, int local_limit, int degree) {
    if (local_limit <= 0) return false;
    return nl ? sssp_work(nl, 0, degree) <= (unsigned long long)local_limit : nfar <= (unsigned int)local_limit;
}

// Called by every block after reading the ring at the top of the loop, when the move is a
// block-local run: block 0 returns once every block has read (the others return at once).
// False when the wait timed out (the solve aborts, as in sssp_grid_sync).
__device__ __forceinline__ bool sssp_nf_readers_done(unsigned int *ctrl) {
    __shared__ bool ok;
    sssp_block_sync();
    if (threadIdx.x == 0) {
        __threadfence();
        atomicAdd(ctrl + 7, 1u);
        ok = true;
        if (blockIdx.x == 0) {
            long long spins = 0;
            while (((volatile unsigned int *)ctrl)[7] < gridDim.x) {
                if (((volatile unsigned int *)ctrl)[5] || ++spins > (1ll << 26)) {
                    atomicExch(ctrl + 5, 1u);
                    ok = false;
                    break;
                }
                __nanosleep(20);
            }
            ctrl[7] = 0;  // the next block-local run comes after at least one grid barrier
            __threadfence();
        }
    }
    sssp_block_sync();
    return ok;
}

// Block 0 alone, from step k / raise r on, while the work stays small (out of line for the
// reason given at sssp_local_phases). Leaves the state for the grid in ctrl[0], ctrl[1],
// ctrl[4] and thr[0].
__device__ __noinline__ void sssp_nf_local(SSSP_NF_ARGS, int k, int r, sssp_d_t T, sssp_d_t delta, int local_limit,
                                           int degree, int limit) {
    bool done = false;
    for (;;) {
        sssp_block_sync();
        const unsigned int nl = sssp_ldcg(cnt + SSSP_NF_L + sssp_nf_move(k, r));
        const unsigned int nfar = nl ? 0u : sssp_ldcg(cnt + SSSP_NF_FAR + r % 3);
        if ((nl == 0 && nfar == 0) || k > limit) {
            done = true;
            break;
        }
        if (!sssp_nf_small(nl, nfar, local_limit, degree)) break;
        if (nl == 0) {
            T = sssp_nf_threshold(sssp_val(sssp_ldcg(thr + SSSP_NF_FMIN + r % 3)), delta);
            sssp_nf_raise(SSSP_NF_PASS, k, r, T, threadIdx.x, blockDim.x);
            ++r;
        } else {
            sssp_nf_step(SSSP_NF_PASS, k, r, T, threadIdx.x, blockDim.x);
            ++k;
        }
    }
    if (threadIdx.x == 0) {
        __stcg(ctrl, (unsigned int)k);
        __stcg(ctrl + 1, done ? 1u : 0u);
        __stcg(ctrl + 4, (unsigned int)r);
        __stcg(thr + SSSP_NF_T, sssp_bits(T));
    }
}

extern "C" __global__ void sssp_nf_init(SSSP_NF_ARGS, int source) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const bool s = i == source;
        settled_at[i] = 0;  // the step stamp
        key[i] = s ? sssp_nf_key(0) : SSSP_KEY_INF;
#if !SSSP_PACKED
        pred[i] = (int)SSSP_NO_PRED;
#endif
        pushed[i] = SSSP_INF_BITS;
        infar[i] = s ? 1 : 0;
        if (i < SSSP_NF_WORDS) {
            cnt[i] = i == SSSP_NF_FAR ? 1u : 0u;  // the far pile of raise 0 holds the source
            thr[i] = i == SSSP_NF_FMIN ? sssp_bits(0) : SSSP_INF_BITS;
        }
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        for (int i = n; i < SSSP_NF_WORDS; ++i) {  // tiny graphs: the rings outgrow the node loop
            cnt[i] = i == SSSP_NF_FAR ? 1u : 0u;
            thr[i] = i == SSSP_NF_FMIN ? sssp_bits(0) : SSSP_INF_BITS;
        }
        qR[0] = source;
    }
}

// delta: Δ as 64 bits (sssp_nf_delta); local_limit and degree as for sssp_e_persistent.
extern "C" __global__ void __launch_bounds__(1024, 1)
    sssp_nf_persistent(SSSP_NF_ARGS, unsigned long long delta_bits, int local_limit, int degree) {
    const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long nthreads = (long long)gridDim.x * blockDim.x;
    const int limit = (int)ctrl[6];
    const sssp_d_t delta = sssp_nf_delta(delta_bits);
    int k = 1, r = 0;
    sssp_d_t T = 0;
    for (;;) {
        const unsigned int nl = sssp_ldcg(cnt + SSSP_NF_L + sssp_nf_move(k, r));
        const unsigned int nfar = nl ? 0u : sssp_ldcg(cnt + SSSP_NF_FAR + r % 3);
        if ((nl == 0 && nfar == 0) || k > limit) {
            if (tid == 0) {
                ctrl[0] = (unsigned int)k;
                ctrl[4] = (unsigned int)r;
                ctrl[1] = 1;
            }
            return;
        }
        if (sssp_nf_small(nl, nfar, local_limit, degree)) {
            if (!sssp_nf_readers_done(ctrl)) {
                sssp_grid_sync(ctrl);  // returns at once: the abort flag is set
                return;
            }
            if (blockIdx.x == 0) sssp_nf_local(SSSP_NF_PASS, k, r, T, delta, local_limit, degree, limit);
            if (!sssp_grid_sync(ctrl)) return;
            if (sssp_ldcg(ctrl + 1)) return;
            k = (int)sssp_ldcg(ctrl);
            r = (int)sssp_ldcg(ctrl + 4);
            T = sssp_val(sssp_ldcg(thr + SSSP_NF_T));
            continue;
        }
        if (nl == 0) {
            T = sssp_nf_threshold(sssp_val(sssp_ldcg(thr + SSSP_NF_FMIN + r % 3)), delta);
            sssp_nf_raise(SSSP_NF_PASS, k, r, T, tid, nthreads);
            ++r;
        } else {
            sssp_nf_step(SSSP_NF_PASS, k, r, T, tid, nthreads);
            ++k;
        }
        if (!sssp_grid_sync(ctrl)) return;
    }
}

// pred[v] (or the low word of the packed key) = the smallest u with d(u) < d(v) and
// d(u) + w(u, v) == d(v), the strict half of the reference's rule; the host completes the
// nodes left without one (reached only through zero-weight edges, or real sums that round the
// weight away) with the reference's level rule.
extern "C" __global__ void sssp_nf_tree(SSSP_ARGS) {
    const long long gtid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long u = gtid / SSSP_RELAX_LANES;
    const int lane = (int)(gtid % SSSP_RELAX_LANES);
    if (u >= n) return;
    const sssp_d_t du = sssp_key_dist(key[u]);
    if (sssp_bits(du) == SSSP_INF_BITS) return;
    const long long end = indptr[u + 1];
    for (long long e = indptr[u] + lane; e < end; e += SSSP_RELAX_LANES) {
        const int v = indices[e];
        const sssp_d_t dv = sssp_key_dist(key[v]);
        if (du < dv && sssp_bits(dv) != SSSP_INF_BITS && sssp_add(du, (sssp_d_t)weights[e]) == dv) {
#if SSSP_PACKED
            atomicMin(reinterpret_cast<unsigned int *>(key + v), (unsigned int)u);  // the low word
#else
            atomicMin((unsigned int *)pred + v, (unsigned int)u);
#endif
        }
    }
}
