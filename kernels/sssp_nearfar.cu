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
//            step: its step stamp, see below).
//   raise    when L_{k+1} is empty: T becomes the smallest multiple of Δ above the far pile's
//            minimum, and one pass splits the pile: live entries below T form L_{k+1}, the rest
//            a new pile (and its exact minimum); entries whose node was pushed at its current
//            distance are dropped. Empty buckets cost nothing; a minimum that came from an
//            entry since gone stale costs one more raise.
// Steps and raises whose work is small (the out-degrees of L summed, or the pile's size, at most
// local_limit) run in block 0 alone with block barriers, the grid waiting at its barrier, as in
// Crauser's block-local phases. The predecessor tree is built afterwards (sssp_nf_tree).
//
// Counters (cnt) and minima (thr) sit in small rings, so that a slot is cleared one barrier after
// its last reader and one before its next writer. |L| is indexed by the move m = (k - 1) + r
// (steps and raises so far): move m reads slot m % 3, fills (m + 1) % 3 and clears (m + 2) % 3,
// so the slot every block reads to choose the move is never written during it.
//   cnt[0..2]  |L| by move % 3        cnt[3..5]  far pile size by raise % 3
//   cnt[6]     largest |L|            cnt[8..9]  Σ|L| over the steps (64-bit)
//   cnt[10..15] the out-degrees of L summed (64-bit), by move % 3, added as entries are appended
//   thr[0]     T at a hand-over       thr[1..3]  far pile minimum by raise % 3
// The far-pile flags are bits (infar: one 32-bit word per 32 nodes).
// ctrl[0] the next step, [1] done, [2..3] grid barrier arrivals, [4] raises, [5] abort, [6] step limit,
// [7] blocks that have read the ring before a block-local run (sssp_nf_readers_done).
//
// Every block reads |L|, its summed degrees and the pile's size right after a grid barrier to
// choose the next move; a grid step or raise never writes the slots that choice uses (a step
// adds to the pile, but a step is chosen only when |L| > 0, and then the pile's size is not
// used). A block-local run does, after a few steps, so block 0 first waits until every block has
// read them.
#define SSSP_NF_ARGS SSSP_ARGS, sssp_bits_t *pushed, unsigned int *infar
#define SSSP_NF_PASS SSSP_PASS, pushed, infar

#include <cooperative_groups/reduce.h>

// Profiling aid (off unless compiled with SSSP_NF_TRACE=1): block 0's thread 0 stamps clock64()
// into sssp_nf_trace, 8 words per move: [0] the top of the move, [1] after the ring read, [2] after
// the move, [3] |L| (bit 40: block-local), and inside a step, for its own first list entry and
// first edge, [4] its node read, [5] its key and pushed read, [6] the edge's atomicMin returned,
// [7] the edge done (stamp and append).
#if SSSP_NF_TRACE
#define SSSP_NF_TRACE_MOVES 8192
__device__ unsigned long long sssp_nf_trace[SSSP_NF_TRACE_MOVES * 8];
#define SSSP_NF_MARK(k, r, slot, value)                                                              \
    if (blockIdx.x == 0 && threadIdx.x == 0 && (k) - 1 + (r) < SSSP_NF_TRACE_MOVES)                \
        sssp_nf_trace[8 * ((k) - 1 + (r)) + (slot)] = (value);
// After `dep` has arrived (the branch reads it), when `once` holds.
#define SSSP_NF_MARK_AFTER(k, r, slot, dep, once)                                                    \
    if (blockIdx.x == 0 && threadIdx.x == 0 && (once) && (k) - 1 + (r) < SSSP_NF_TRACE_MOVES &&    \
        (long long)(dep) != 0x7edcba98)                                                               \
        sssp_nf_trace[8 * ((k) - 1 + (r)) + (slot)] = clock64();
#else
#define SSSP_NF_MARK(k, r, slot, value)
#define SSSP_NF_MARK_AFTER(k, r, slot, dep, once)
#endif

// The out-degrees summed of the list filled by move m (64-bit counters, by m % 3).
__device__ __forceinline__ unsigned long long *sssp_nf_work(unsigned int *cnt, int slot) {
    return reinterpret_cast<unsigned long long *>(cnt + SSSP_NF_DEG) + slot;
}

// Appends v to a near list and adds its out-degree to the list's work: one atomic per coalesced
// group for the slot and one for the degrees (v's row bounds load while the slot's atomic runs).
__device__ __forceinline__ void sssp_nf_append(const long long *__restrict__ indptr, int *list, unsigned int *count,
                                               unsigned long long *work, int v) {
    const long long b0 = __ldg(indptr + v), b1 = __ldg(indptr + v + 1);
    cg::coalesced_group g = cg::coalesced_threads();
    unsigned int base = 0;
    if (g.thread_rank() == 0) base = atomicAdd(count, g.size());
    list[g.shfl(base, 0) + g.thread_rank()] = v;
    const unsigned long long sum = cg::reduce(g, (unsigned long long)(b1 - b0), cg::plus<unsigned long long>());
    if (g.thread_rank() == 0) atomicAdd(work, sum);
}

// Sets v's far-pile flag; true when it was clear (v joins the pile).
__device__ __forceinline__ bool sssp_nf_flag(unsigned int *infar, int v) {
    const unsigned int bit = 1u << (v & 31);
    return (atomicOr(infar + (v >> 5), bit) & bit) == 0;
}
__device__ __forceinline__ void sssp_nf_unflag(unsigned int *infar, int v) {
    atomicAnd(infar + (v >> 5), ~(1u << (v & 31)));
}

// The step stamp: the step that last lowered a node, so that the step appends it to L_{k+1} once.
// With 32-bit distances it is the low word of the packed key (distance high, stamp low): the
// atomicMin that lowers the distance writes the stamp in the same round trip, and returns the
// previous stamp (an equal distance never replaces the word, since stamps only grow). The
// predecessor takes the low word only after the solve (sssp_nf_finish, then sssp_nf_tree), and
// settled_at is not allocated. Wider keys keep the stamps in settled_at (one more atomic).
__device__ __forceinline__ sssp_key_t sssp_nf_key(sssp_d_t d, unsigned int stamp) {
#if SSSP_PACKED
    return ((sssp_key_t)d << 32) | stamp;
#else
    return sssp_bits(d);
#endif
}

// Lowers t's key to distance nd in step k; true when t is to join L_{k+1} (its distance fell,
// and no earlier lowering in this step has appended it).
__device__ __forceinline__ bool sssp_nf_lower(sssp_key_t *key, int *settled_at, int t, sssp_d_t nd, int k) {
    const sssp_key_t kt = sssp_nf_key(nd, (unsigned int)(k + 1));
    const sssp_key_t old = atomicMin(key + t, kt);
#if SSSP_PACKED
    return sssp_key_dist(old) > nd && (unsigned int)old != (unsigned int)(k + 1);
#else
    return kt < old && atomicExch(settled_at + t, k + 1) != k + 1;
#endif
}

// After the last move, every block clears its stripe of the stamps in the packed keys' low words
// for the predecessor (sssp_nf_tree); no block writes a key any more.
__device__ __forceinline__ void sssp_nf_finish(sssp_key_t *key, int n) {
#if SSSP_PACKED
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        key[i] |= (sssp_key_t)SSSP_NO_PRED;
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

// nl: |L_k|, as the caller read it from the ring.
__device__ void sssp_nf_step(SSSP_NF_ARGS, int k, int r, sssp_d_t T, unsigned int nl, long long tid,
                             long long nthreads) {
    const int m = sssp_nf_move(k, r);
    if (tid == 0) {
        cnt[SSSP_NF_L + (m + 2) % 3] = 0;  // read by move m - 1, written from move m + 1 on
        *sssp_nf_work(cnt, (m + 2) % 3) = 0;
        atomicMax(cnt + SSSP_NF_MAXL, nl);
        atomicAdd(reinterpret_cast<unsigned long long *>(cnt + SSSP_NF_SUM), (unsigned long long)nl);
    }
    const int *L = qF + (long long)(k & 1) * n;
    int *next = qF + (long long)((k + 1) & 1) * n;
    unsigned int *next_count = cnt + SSSP_NF_L + (m + 1) % 3;
    unsigned long long *next_work = sssp_nf_work(cnt, (m + 1) % 3);
    int *far = qR + (long long)(r & 1) * n;
    unsigned int *far_count = cnt + SSSP_NF_FAR + r % 3;
    sssp_bits_t fmin = SSSP_INF_BITS;
#if SSSP_NF_TRACE
    bool first_edge = true;
#endif
    sssp_walk(
        indptr, indices, weights, nl, tid, nthreads,
        [&](long long i) {
            const int v = sssp_ldcg(L + i);
            SSSP_NF_MARK_AFTER(k, r, 4, v, i == 0);
            return v;
        },
        [&](long long i, int v, sssp_bits_t &db) {
            const sssp_d_t d = sssp_dist_of(key, v);
            const sssp_bits_t p = sssp_ldcg(pushed + v);
            db = sssp_bits(d);
            SSSP_NF_MARK_AFTER(k, r, 5, db ^ p, i == 0);
            if (db >= p) return false;  // pushed at this distance already
            if (!(d < T)) {
                fmin = sssp_min_bits(fmin, db);
                if (sssp_nf_flag(infar, v)) far[sssp_append_slot(far_count)] = v;
                return false;
            }
            __stcg(pushed + v, db);
            return true;
        },
        // One atomicMin per edge (a pre-read of the target's key saved nothing measurable on the
        // H200 and adds a round trip when the key falls).
        [&](int t, sssp_w_t w, int, sssp_d_t du) {
            const bool join = sssp_nf_lower(key, settled_at, t, sssp_add(du, (sssp_d_t)w), k);
#if SSSP_NF_TRACE
            const bool traced = first_edge;
            first_edge = false;
#endif
            SSSP_NF_MARK_AFTER(k, r, 6, join, traced);
            if (join) sssp_nf_append(indptr, next, next_count, next_work, t);
            SSSP_NF_MARK_AFTER(k, r, 7, t, traced && join);
        });
    sssp_fold_min(thr + SSSP_NF_FMIN + r % 3, fmin);
}

// nfar: the far pile's size, as the caller read it from the ring.
__device__ void sssp_nf_raise(SSSP_NF_ARGS, int k, int r, sssp_d_t T, unsigned int nfar, long long tid,
                              long long nthreads) {
    const int m = sssp_nf_move(k, r);
    if (tid == 0) {  // read by raise r - 1 (move m - 1), written from raise r + 1 (move m + 1) on
        cnt[SSSP_NF_L + (m + 2) % 3] = 0;
        *sssp_nf_work(cnt, (m + 2) % 3) = 0;
        cnt[SSSP_NF_FAR + (r + 2) % 3] = 0;
        thr[SSSP_NF_FMIN + (r + 2) % 3] = SSSP_INF_BITS;
    }
    const int *far = qR + (long long)(r & 1) * n;
    int *kept = qR + (long long)((r + 1) & 1) * n;
    unsigned int *kept_count = cnt + SSSP_NF_FAR + (r + 1) % 3;
    int *L = qF + (long long)(k & 1) * n;
    unsigned int *L_count = cnt + SSSP_NF_L + (m + 1) % 3;
    unsigned long long *L_work = sssp_nf_work(cnt, (m + 1) % 3);
    sssp_bits_t fmin = SSSP_INF_BITS;
    for (long long i = tid; i < nfar; i += nthreads) {
        const int v = sssp_ldcg(far + i);
        const sssp_d_t d = sssp_dist_of(key, v);
        const sssp_bits_t p = sssp_ldcg(pushed + v);
        const sssp_bits_t db = sssp_bits(d);
        if (db >= p) {
            sssp_nf_unflag(infar, v);  // stale: pushed at this distance since
        } else if (d < T) {
            sssp_nf_unflag(infar, v);
            sssp_nf_append(indptr, L, L_count, L_work, v);
        } else {
            kept[sssp_append_slot(kept_count)] = v;
            fmin = sssp_min_bits(fmin, db);
        }
    }
    sssp_fold_min(thr + SSSP_NF_FMIN + (r + 1) % 3, fmin);
}

// Does the next step (nl > 0, out-degrees summed `work`) or raise (nl == 0, pile of nfar) stay in
// one block? Only when one block covers the list in one pass (a lane group per entry, a thread
// per pile entry) and the summed degrees are at most local_limit: a block-local move saves the
// grid barrier (1.5-3 µs on the H200) but pays the chain of round trips of a step once per pass,
// so a list a block walks in ten passes cost 36-41 µs a step on t60k against 7.5 µs on the grid
// (clock64 trace, SSSP_NF_TRACE). The summed degrees see a hub, where |L| times the mean
// degree did not.
__device__ __forceinline__ bool sssp_nf_small(unsigned int nl, unsigned long long work, unsigned int nfar,
                                              int local_limit) {
    if (local_limit <= 0) return false;
    if (nl) return nl <= blockDim.x / SSSP_RELAX_LANES && work <= (unsigned long long)local_limit;
    return nfar <= blockDim.x && nfar <= (unsigned int)local_limit;
}

// The ring at the top of a move: |L|, its summed out-degrees and the far pile's size, read in
// one round trip. The pile's size may be growing when |L| > 0 (a step is running in a faster
// block); it is used only when |L| == 0, and then no move writes it.
__device__ __forceinline__ void sssp_nf_read_ring(unsigned int *cnt, int k, int r, unsigned int &nl,
                                                  unsigned long long &work, unsigned int &nfar) {
    const int m = sssp_nf_move(k, r);
    nl = sssp_ldcg(cnt + SSSP_NF_L + m);
    work = sssp_ldcg(sssp_nf_work(cnt, m));
    nfar = sssp_ldcg(cnt + SSSP_NF_FAR + r % 3);
}

// Called by every block after reading the ring at the top of the loop, when the move is a
// block-local run: block 0 returns once every block has read (the others return at once).
// False when the wait timed out (the solve aborts, as in sssp_grid_sync).
__device__ __forceinline__ bool sssp_nf_readers_done(unsigned int *ctrl) {
    __shared__ bool ok;
    sssp_block_sync();
    if (threadIdx.x == 0) {
        __threadfence();
        atomicAdd(ctrl + SSSP_CTRL_READERS, 1u);
        ok = true;
        if (blockIdx.x == 0) {
            long long spins = 0;
            while (((volatile unsigned int *)ctrl)[SSSP_CTRL_READERS] < gridDim.x) {
                if (((volatile unsigned int *)ctrl)[SSSP_CTRL_ABORT] || ++spins > (1ll << 26)) {
                    atomicExch(ctrl + SSSP_CTRL_ABORT, 1u);
                    ok = false;
                    break;
                }
                __nanosleep(20);
            }
            ctrl[SSSP_CTRL_READERS] = 0;  // the next block-local run comes after at least one grid barrier
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
                                           int limit) {
    bool done = false;
    for (;;) {
        sssp_block_sync();
        SSSP_NF_MARK(k, r, 0, clock64());
        unsigned int nl, nfar;
        unsigned long long work;
        sssp_nf_read_ring(cnt, k, r, nl, work, nfar);
        if ((nl == 0 && nfar == 0) || k > limit) {
            done = true;
            break;
        }
        if (!sssp_nf_small(nl, work, nfar, local_limit)) break;
        SSSP_NF_MARK(k, r, 1, clock64());
        SSSP_NF_MARK(k, r, 3, nl | (1ull << 40));
        if (nl == 0) {
            T = sssp_nf_threshold(sssp_val(sssp_ldcg(thr + SSSP_NF_FMIN + r % 3)), delta);
            sssp_nf_raise(SSSP_NF_PASS, k, r, T, nfar, threadIdx.x, blockDim.x);
            SSSP_NF_MARK(k, r, 2, clock64());
            ++r;
        } else {
            sssp_nf_step(SSSP_NF_PASS, k, r, T, nl, threadIdx.x, blockDim.x);
            SSSP_NF_MARK(k, r, 2, clock64());
            ++k;
        }
    }
    if (threadIdx.x == 0) {
        __stcg(ctrl + SSSP_CTRL_PHASE, (unsigned int)k);
        __stcg(ctrl + SSSP_CTRL_DONE, done ? 1u : 0u);
        __stcg(ctrl + SSSP_CTRL_BUCKETS, (unsigned int)r);
        __stcg(thr + SSSP_NF_T, sssp_bits(T));
    }
}

extern "C" __global__ void sssp_nf_init(SSSP_NF_ARGS, int source) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const bool s = i == source;
#if !SSSP_PACKED
        settled_at[i] = 0;  // the step stamp
#endif
        key[i] = s ? sssp_nf_key(0, 0) : SSSP_KEY_INF;
#if !SSSP_PACKED
        pred[i] = (int)SSSP_NO_PRED;
#endif
        pushed[i] = SSSP_INF_BITS;
        if (i < ((long long)n + 31) / 32) infar[i] = i == source / 32 ? 1u << (source & 31) : 0u;
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

// delta: Δ as 64 bits (sssp_nf_delta); local_limit: a step whose list's out-degrees sum to at
// most this (or a raise of a pile at most this long) runs in block 0 alone; 0 never.
extern "C" __global__ void __launch_bounds__(1024, 1)
    sssp_nf_persistent(SSSP_NF_ARGS, unsigned long long delta_bits, int local_limit) {
    const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long nthreads = (long long)gridDim.x * blockDim.x;
    const int limit = (int)ctrl[SSSP_CTRL_LIMIT];
    const sssp_d_t delta = sssp_nf_delta(delta_bits);
    int k = 1, r = 0;
    sssp_d_t T = 0;
    for (;;) {
        SSSP_NF_MARK(k, r, 0, clock64());
        unsigned int nl, nfar;
        unsigned long long work;
        sssp_nf_read_ring(cnt, k, r, nl, work, nfar);
        if ((nl == 0 && nfar == 0) || k > limit) {
            if (tid == 0) {
                ctrl[SSSP_CTRL_PHASE] = (unsigned int)k;
                ctrl[SSSP_CTRL_BUCKETS] = (unsigned int)r;
                ctrl[SSSP_CTRL_DONE] = 1;
            }
            sssp_nf_finish(key, n);  // every block stops at this move
            return;
        }
        if (sssp_nf_small(nl, work, nfar, local_limit)) {
            if (!sssp_nf_readers_done(ctrl)) {
                sssp_grid_sync(ctrl);  // returns at once: the abort flag is set
                return;
            }
            if (blockIdx.x == 0) sssp_nf_local(SSSP_NF_PASS, k, r, T, delta, local_limit, limit);
            if (!sssp_grid_sync(ctrl)) return;
            if (sssp_ldcg(ctrl + SSSP_CTRL_DONE)) {
                sssp_nf_finish(key, n);
                return;
            }
            k = (int)sssp_ldcg(ctrl + SSSP_CTRL_PHASE);
            r = (int)sssp_ldcg(ctrl + SSSP_CTRL_BUCKETS);
            T = sssp_val(sssp_ldcg(thr + SSSP_NF_T));
            continue;
        }
        SSSP_NF_MARK(k, r, 1, clock64());
        SSSP_NF_MARK(k, r, 3, nl);
        if (nl == 0) {
            T = sssp_nf_threshold(sssp_val(sssp_ldcg(thr + SSSP_NF_FMIN + r % 3)), delta);
            sssp_nf_raise(SSSP_NF_PASS, k, r, T, nfar, tid, nthreads);
            SSSP_NF_MARK(k, r, 2, clock64());
            ++r;
        } else {
            sssp_nf_step(SSSP_NF_PASS, k, r, T, nl, tid, nthreads);
            SSSP_NF_MARK(k, r, 2, clock64());
            ++k;
        }
        if (!sssp_grid_sync(ctrl)) return;
    }
}

// ---- near-far across the grid: a grid barrier per bucket, not per step ------------------------
// The grid's counterpart of the cluster loop fused across blocks (sssp_cluster.cu, spread), for
// graphs whose distances do not fit a cluster's shared memory, with the same protocol. Bucket r:
//   split    the far pile r is split as by sssp_nf_raise (T from its minimum): stale entries
//            dropped, live ones below T queued (below), the rest kept in pile r + 1;
//   drain    node v is queued to block v % S (S = min(blocks, n) shards of qF, read as 64-bit
//            entries (r + 1) << 32 | node, n / S of them a shard, so an entry left from an earlier
//            bucket is never taken for this one and nothing is cleared), once (its queued bit). A
//            block's warps take tickets into its own shard and wait for their entries; a popped
//            node's edges are relaxed, a lane per edge: a target that falls below T is queued, one
//            that falls at or above T joins pile r + 1 (once: its far flag). A push past a shard's
//            entries joins pile r + 1 instead (its distance is below T, so the next bucket has the
//            same threshold);
//   quiet    each block counts its split (until its share is done) and the nodes queued to it
//            (until their edges are), and one word counts the blocks whose count is not zero: a
//            push that takes a block's count from zero marks it busy before the entry shows, the
//            release that empties it marks it idle, and the pusher's own block is busy all the
//            while. The release that finds no block busy records bucket r as finished (the `gen`
//            word); every warp then leaves, each block resets its shard, and a grid barrier ends
//            the bucket. No address takes every push or pop: each block's words take its own.
// Any order of relaxations gives exact distances; T only orders the work. aw (ASYNC_WORDS + 4 per
// block, contract NF_ASYNC_*): [0] gen, [1] busy blocks, then per block its shard's tickets taken,
// entries pushed and count. qbits: one queued bit per node. Both are set up here at the start.
// The piles' sizes and minima are the step loop's (cnt, thr). Writes ctrl[0] buckets + 1, ctrl[1]
// done, ctrl[4] buckets; cnt[7] the nodes popped.
#define SSSP_NFA_SPIN_LIMIT (1ll << 26)

__device__ __forceinline__ unsigned long long sssp_nfa_entry(int r, int v) {
    return ((unsigned long long)(unsigned int)(r + 1) << 32) | (unsigned int)v;
}

__device__ __forceinline__ unsigned int *sssp_nfa_block(unsigned int *aw, int b) {
    return aw + SSSP_NFA_WORDS + SSSP_NFA_BLOCK_WORDS * b;
}

// One counted context of this block (its split, or a pop, after its pushes counted) is done; the
// release that leaves no block busy marks bucket r finished, and the busy count is set for the
// next bucket (every block busy with its split).
__device__ __forceinline__ void sssp_nfa_release(unsigned int *aw, int r) {
    __threadfence();
    if (atomicSub(sssp_nfa_block(aw, blockIdx.x) + SSSP_NFA_PEND, 1u) != 1u) return;
    if (atomicSub(aw + SSSP_NFA_BUSY, 1u) != 1u) return;
    __threadfence();
    atomicExch(aw + SSSP_NFA_BUSY, gridDim.x);
    atomicMax(aw + SSSP_NFA_GEN, (unsigned int)(r + 1));
}

// v, lowered to d (at or above T, or past a shard), joins far pile r + 1 once (its far flag);
// fmin gathers the pile's minimum for the caller to fold.
__device__ __forceinline__ void sssp_nfa_far(int *qR, unsigned int *cnt, unsigned int *infar, int n, int r, int v,
                                             sssp_d_t d, sssp_bits_t &fmin) {
    fmin = sssp_min_bits(fmin, sssp_bits(d));
    if (sssp_nf_flag(infar, v)) qR[(long long)((r + 1) & 1) * n + atomicAdd(cnt + SSSP_NF_FAR + (r + 1) % 3, 1u)] = v;
}

// v's distance fell to d below T in bucket r: it is queued once to its shard (its queued bit; a
// pop clears the bit before it reads the distance, so a node found queued is relaxed at d or
// less). shards: min(blocks, n); cap: entries a shard.
__device__ __forceinline__ void sssp_nfa_push(int *qF, int *qR, unsigned int *cnt, unsigned int *infar,
                                              unsigned int *qbits, unsigned int *aw, int n, int shards, int cap,
                                              int r, int v, sssp_d_t d, sssp_bits_t &fmin) {
    const unsigned int bit = 1u << (v & 31);
    __threadfence();  // the distance before the queued bit
    if (atomicOr(qbits + (v >> 5), bit) & bit) return;
    const int o = v % shards;
    unsigned int *ow = sssp_nfa_block(aw, o);
    if (atomicAdd(ow + SSSP_NFA_PEND, 1u) == 0u) atomicAdd(aw + SSSP_NFA_BUSY, 1u);  // counted first
    const unsigned int q = atomicAdd(ow + SSSP_NFA_TAIL, 1u);
    if (q < (unsigned int)cap) {
        __threadfence();  // the counts performed before the entry shows (the adds return nothing)
        reinterpret_cast<volatile unsigned long long *>(qF)[(long long)o * cap + q] = sssp_nfa_entry(r, v);
        return;
    }
    atomicAnd(qbits + (v >> 5), ~bit);  // the shard is full: the next bucket (same T) takes it
    sssp_nfa_far(qR, cnt, infar, n, r, v, d, fmin);
    if (atomicSub(ow + SSSP_NFA_PEND, 1u) == 1u) atomicSub(aw + SSSP_NFA_BUSY, 1u);  // never the last busy
}

// delta: Δ as 64 bits (sssp_nf_delta); qbits: (n + 31) / 32 words; aw: ASYNC_WORDS + 4 per block.
// Every block resident at once.
extern "C" __global__ void __launch_bounds__(1024, 1)
    sssp_nf_async(SSSP_NF_ARGS, unsigned long long delta_bits, unsigned int *qbits, unsigned int *aw) {
    const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long nthreads = (long long)gridDim.x * blockDim.x;
    const int lane = threadIdx.x & 31;
    const int limit = (int)ctrl[SSSP_CTRL_LIMIT];
    const sssp_d_t delta = sssp_nf_delta(delta_bits);
    const int shards = min((int)gridDim.x, max(n, 1));
    const int cap = n / shards;
    const bool owns = (int)blockIdx.x < shards;
    unsigned int *mine = sssp_nfa_block(aw, blockIdx.x);
    const volatile unsigned long long *vq =  // this block's shard (read only where it owns one)
        reinterpret_cast<const volatile unsigned long long *>(qF) + (owns ? (long long)blockIdx.x * cap : 0);
    const volatile unsigned int *vgen = aw + SSSP_NFA_GEN;
    for (long long i = tid; i < ((long long)n + 31) / 32; i += nthreads) qbits[i] = 0u;
    // The shards' entries: one left by an earlier solve carries a bucket tag this solve reuses.
    for (long long i = tid; i < n; i += nthreads) reinterpret_cast<unsigned long long *>(qF)[i] = 0ull;
    if (threadIdx.x == 0) {  // this block's words: its split counts; every block busy
        mine[SSSP_NFA_HEAD] = mine[SSSP_NFA_TAIL] = 0u;
        mine[SSSP_NFA_PEND] = 1u;
        if (blockIdx.x == 0) {
            aw[SSSP_NFA_GEN] = 0u;
            aw[SSSP_NFA_BUSY] = gridDim.x;
        }
    }
    if (!sssp_grid_sync(ctrl)) return;
    unsigned long long popped = 0;
    int r = 0;
    for (;; ++r) {
        const unsigned int nfar = sssp_ldcg(cnt + SSSP_NF_FAR + r % 3);
        if (nfar == 0 || r > limit) {
            if (tid == 0) {
                ctrl[SSSP_CTRL_PHASE] = (unsigned int)(r + 1);
                ctrl[SSSP_CTRL_BUCKETS] = (unsigned int)r;
                ctrl[SSSP_CTRL_DONE] = nfar == 0 ? 1u : 0u;
            }
            break;
        }
        const sssp_d_t T = sssp_nf_threshold(sssp_val(sssp_ldcg(thr + SSSP_NF_FMIN + r % 3)), delta);
        if (tid == 0) {  // pile r - 1's words (read in bucket r - 1)
            cnt[SSSP_NF_FAR + (r + 2) % 3] = 0u;
            thr[SSSP_NF_FMIN + (r + 2) % 3] = SSSP_INF_BITS;
        }
        // Split pile r.
        const int *far = qR + (long long)(r & 1) * n;
        sssp_bits_t fmin = SSSP_INF_BITS;
        for (long long i = tid; i < nfar; i += nthreads) {
            const int v = sssp_ldcg(far + i);
            const sssp_d_t d = sssp_dist_of(key, v);
            const sssp_bits_t db = sssp_bits(d);
            if (db >= sssp_ldcg(pushed + v)) {
                sssp_nf_unflag(infar, v);  // stale: pushed at this distance since
            } else if (d < T) {
                sssp_nf_unflag(infar, v);
                sssp_nfa_push(qF, qR, cnt, infar, qbits, aw, n, shards, cap, r, v, d, fmin);
            } else {
                qR[(long long)((r + 1) & 1) * n + sssp_append_slot(cnt + SSSP_NF_FAR + (r + 1) % 3)] = v;
                fmin = sssp_min_bits(fmin, db);
            }
        }
        sssp_block_sync();
        if (threadIdx.x == 0) sssp_nfa_release(aw, r);  // this block's share of the split is done
        // Drain this block's shard: a warp per popped node, a lane per edge.
        bool stalled = false;
        for (;;) {
            int v = -1;
            if (lane == 0) {
                const unsigned int h = owns ? atomicAdd(mine + SSSP_NFA_HEAD, 1u) : 0xFFFFFFFFu;
                const unsigned int want = (unsigned int)(r + 1);
                long long spins = 0;
                for (;;) {
                    if (h < (unsigned int)cap) {
                        const unsigned long long e = vq[h];
                        if ((unsigned int)(e >> 32) == want) {
                            v = (int)(unsigned int)e;
                            break;
                        }
                    }
                    if (*vgen > (unsigned int)r) break;
                    if (++spins > SSSP_NFA_SPIN_LIMIT || ((volatile unsigned int *)ctrl)[SSSP_CTRL_ABORT]) {
                        atomicExch(ctrl + SSSP_CTRL_ABORT, 1u);
                        stalled = true;
                        break;
                    }
                    __nanosleep(20);
                }
                if (v >= 0) atomicAnd(qbits + (v >> 5), ~(1u << (v & 31)));  // a later fall queues it again
                __threadfence();  // the bit before the distance; or the last pushes before the reset
            }
            v = __shfl_sync(SSSP_FULL_MASK, v, 0);
            if (v < 0) break;
            sssp_d_t d = 0;
            bool relax = false;
            if (lane == 0) {
                d = sssp_dist_of(key, v);
                const sssp_bits_t db = sssp_bits(d);
                relax = db < sssp_ldcg(pushed + v);  // not pushed at this distance already
                if (relax) __stcg(pushed + v, db);
            }
            relax = __shfl_sync(SSSP_FULL_MASK, relax, 0);
            d = __shfl_sync(SSSP_FULL_MASK, d, 0);
            if (relax) {
                const long long e1 = __ldg(indptr + v + 1);
                for (long long e = __ldg(indptr + v) + lane; e < e1; e += 32) {
                    const int t = __ldg(indices + e);
                    const sssp_d_t nd = sssp_add(d, (sssp_d_t)__ldg(weights + e));
                    const sssp_key_t old = atomicMin(key + t, sssp_nf_key(nd, 0));
                    if (!(nd < sssp_key_dist(old))) continue;
                    if (nd < T) sssp_nfa_push(qF, qR, cnt, infar, qbits, aw, n, shards, cap, r, t, nd, fmin);
                    else sssp_nfa_far(qR, cnt, infar, n, r, t, nd, fmin);
                }
            }
            __syncwarp();
            if (lane == 0) {
                ++popped;
                sssp_nfa_release(aw, r);  // after this pop's pushes (they counted first)
            }
        }
        sssp_fold_min(thr + SSSP_NF_FMIN + (r + 1) % 3, fmin);
        if (__any_sync(SSSP_FULL_MASK, stalled)) {
            sssp_grid_sync(ctrl);  // returns at once: the abort flag is set
            return;
        }
        sssp_block_sync();
        if (threadIdx.x == 0) {  // quiet: nothing is pushed any more in this bucket
            mine[SSSP_NFA_HEAD] = mine[SSSP_NFA_TAIL] = 0u;
            mine[SSSP_NFA_PEND] = 1u;  // the next bucket's split
        }
        if (!sssp_grid_sync(ctrl)) return;
    }
    if (lane == 0 && popped) atomicAdd(cnt + SSSP_NF_POPS, (unsigned int)min(popped, 0xFFFFFFFFull));
    sssp_nf_finish(key, n);
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
