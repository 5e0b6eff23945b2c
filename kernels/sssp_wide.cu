// The wide loop: near-far (Δ-stepping) for graphs whose steps are large, one kernel per move,
// every edge of a step spread evenly over the device. Compiled after sssp_contract.cuh
// (kernels.SOURCE_PARTS), whose SSSP_W_* words it keeps, as a module of its own: engine 2's
// digest, and the tuning stored for it, do not change with it.
//
// Why: the persistent loop gives a list entry one lane group and walks a hub's edges in one
// block, with one block per multiprocessor resident for its grid barrier. On a graph of millions
// of nodes a step is millions of entries and a hub tens of thousands of edges, so each lane walks
// hundreds of entries one dependent chain after another, and one block walks a hub while the
// others wait at the barrier. Here a step is one launch at full occupancy, and work is dealt out
// by edges, not by entries:
//   - a warp takes 32 list entries, scans their degrees (shuffles) and walks the 32 rows as one
//     run of edges, 32 x SSSP_W_BATCH at a time: each lane finds its edge's row by a binary
//     search over the scan, so a warp's lanes are busy whatever the degrees;
//   - an entry with more than SSSP_W_HUB_DEGREE edges becomes chunks of SSSP_W_CHUNK edges in a
//     hub queue, which the next launch (sssp_w_hubs) deals out a chunk per warp over the device.
// The host queues rounds of moves (step, hubs, advance, raise, advance) without waiting; every
// kernel reads the mode word first and returns at once when its move is not the current one, so
// rounds queued past the end cost a few microseconds each. Once the host has seen the end it
// queues the finish (sssp_w_finish) behind them.
//
// State (the engine's near-far layout, so that its tree pass and the result pass read it):
//   key[v]     distance << 32 | step stamp during the solve; the stamp becomes SSSP_NO_PRED at the
//              end (sssp_w_finish) and the tree pass writes the predecessor there
//   pushed[v]  the distance v last pushed its out-edges with (a list entry at it is stale)
//   infar      one bit per node: in the far pile
//   lists      two near lists of n entries (step k reads half k & 1, fills half (k + 1) & 1)
//   piles      two far piles of n entries (w[SSSP_W_PILE] is the current one)
//   hubs       the hub queue: (du << 32 | v, first edge) per chunk
//   w          the SSSP_W_* words; cnt and ctrl are written at the end for the result pass
// A lowering in step k stamps 2k + 2 below the threshold T (the near list) and 2k + 1 at or above
// it (the far pile): stamps only grow, so an equal distance never replaces a key, and a node
// whose first lowering in a step went to the pile still joins the near list when a later one
// brings it below T (a near lowering always has the smaller distance).
//
// Light and heavy edges (SSSP_W_SPLIT 1, Meyer and Sanders): a step pushes only the light edges
// (w < Δ) of its entries, and every node pushed for the first time joins the bucket's list (in
// the pile half the raise fills later, w[SSSP_W_BUCKET] entries). Once a step leaves the near list
// empty, one heavy move pushes the heavy edges of the bucket's nodes, once each, at their final
// distances: a node of the bucket is at T - Δ or more, so a heavy edge lands at T or past it, in
// the far pile, and no step of the bucket needed it (the host sizes distances so that no sum
// reaches SSSP_W_INF, so a bucket whose threshold saturates there has no heavy edge). An entry
// that is pushed again within its bucket then walks only its light edges (a CPU model:
// benchmarks/hub_deferral_sim.py). The rows are partitioned once, when the solver is made
// (sssp_w_partition): each row's light edges first, in their order, then its heavy ones, and
// light[v] counts the light ones, so a walk reads only the part of a row it pushes. (Filtering
// whole rows by weight instead saved nothing on the H200: streaming a hub's row cost the same
// whether its heavy edges were then dropped or pushed, run 93.) Without a split, or with Δ at
// infinity, light is null and every walk takes whole rows.

// Compile-time parameters (kernels.WideParams, always given with -D): SSSP_W_BATCH,
// SSSP_W_HUB_DEGREE, SSSP_W_CHUNK, SSSP_W_MIN_BLOCKS, SSSP_W_SPLIT.
#if SSSP_W_MIN_BLOCKS > 0
#define SSSP_W_BOUNDS __launch_bounds__(SSSP_W_BLOCK, SSSP_W_MIN_BLOCKS)
#else
#define SSSP_W_BOUNDS __launch_bounds__(SSSP_W_BLOCK)
#endif
#define SSSP_W_FULL 0xFFFFFFFFu
#define SSSP_W_INF 0xFFFFFFFFu

#define SSSP_W_ARGS                                                                              \
    const long long *__restrict__ indptr, const int *__restrict__ indices,                       \
        const unsigned int *__restrict__ weights, unsigned long long *key, unsigned int *pushed, \
        unsigned int *infar, int *lists, int *piles, unsigned long long *hubs, unsigned int *w, int n, \
        const int *__restrict__ light

__device__ __forceinline__ unsigned int sssp_w_dist(unsigned long long k) { return (unsigned int)(k >> 32); }

__device__ __forceinline__ unsigned int sssp_w_word(const unsigned int *w, int i) {
    return ((const volatile unsigned int *)w)[i];
}

// The smallest multiple of Δ above dmin; SSSP_W_INF when it would not fit.
__device__ __forceinline__ unsigned int sssp_w_threshold(unsigned int dmin, unsigned long long delta) {
    if (delta >= SSSP_W_INF) return SSSP_W_INF;
    const unsigned long long t = ((unsigned long long)dmin / delta) * delta + delta;
    return t >= SSSP_W_INF ? SSSP_W_INF : (unsigned int)t;
}

// A slot in a list for every lane of the warp that wants one: one atomic per warp. Every lane of
// the warp calls it (converged).
__device__ __forceinline__ unsigned int sssp_w_slot(unsigned int *count, bool want) {
    const unsigned int lane = threadIdx.x & 31u;
    const unsigned int m = __ballot_sync(SSSP_W_FULL, want);
    if (m == 0) return 0;
    const int leader = __ffs(m) - 1;
    unsigned int base = 0;
    if ((int)lane == leader) base = atomicAdd(count, (unsigned int)__popc(m));
    base = __shfl_sync(SSSP_W_FULL, base, leader);
    return base + (unsigned int)__popc(m & ((1u << lane) - 1u));
}

// Appends t[j] to a list for every (lane, j) that wants it: one atomic per warp for the whole
// batch (the list's count is the hottest address of a step). Every lane of the warp calls it.
__device__ __forceinline__ void sssp_w_append(unsigned int *count, int *list, const bool (&want)[SSSP_W_BATCH],
                                              const int (&t)[SSSP_W_BATCH]) {
    const unsigned int lane = threadIdx.x & 31u, below = (1u << lane) - 1u;
    unsigned int masks[SSSP_W_BATCH], total = 0;
#pragma unroll
    for (int j = 0; j < SSSP_W_BATCH; ++j) {
        masks[j] = __ballot_sync(SSSP_W_FULL, want[j]);
        total += (unsigned int)__popc(masks[j]);
    }
    if (total == 0) return;
    unsigned int base = 0;
    if (lane == 0) base = atomicAdd(count, total);
    base = __shfl_sync(SSSP_W_FULL, base, 0);
#pragma unroll
    for (int j = 0; j < SSSP_W_BATCH; ++j) {
        if (want[j]) list[base + (unsigned int)__popc(masks[j] & below)] = t[j];
        base += (unsigned int)__popc(masks[j]);
    }
}

__device__ __forceinline__ unsigned int sssp_w_warp_min(unsigned int v) {
    for (int o = 16; o > 0; o >>= 1) v = min(v, __shfl_xor_sync(SSSP_W_FULL, v, o));
    return v;
}

// The move's fixed words, read once at the top of a kernel.
struct SsspWMove {
    unsigned int k, T, stamp_near, stamp_far;
    int *next, *far;
    unsigned int *next_count, *far_count;
};

__device__ __forceinline__ SsspWMove sssp_w_move(int *lists, int *piles, unsigned int *w, int n) {
    SsspWMove m;
    m.k = sssp_w_word(w, SSSP_W_K);
    m.T = sssp_w_word(w, SSSP_W_T);
    m.stamp_near = 2u * m.k + 2u;
    m.stamp_far = 2u * m.k + 1u;
    m.next = lists + (long long)((m.k + 1u) & 1u) * n;
    m.far = piles + (long long)sssp_w_word(w, SSSP_W_PILE) * n;
    m.next_count = w + SSSP_W_NEXT;
    m.far_count = w + SSSP_W_FAR;
    return m;
}

// Lowers the targets of a batch of edges (go[j]: edge j is real; t[j] its target, nd[j] the
// candidate distance) and appends the targets whose distance fell: below T to the next near list
// (once per step: the stamp), at or above it to the far pile (once: the infar bit), whose
// minimum folds into fmin. A pre-read of the key skips the atomic for an edge that cannot lower
// it (keys only fall, so a stale read is never too low): in a label-correcting step most edges
// do not.
__device__ __forceinline__ void sssp_w_lower(unsigned long long *key, unsigned int *infar, const SsspWMove &m,
                                             const bool (&go)[SSSP_W_BATCH], const int (&t)[SSSP_W_BATCH],
                                             const unsigned int (&nd)[SSSP_W_BATCH], unsigned int &fmin) {
    unsigned long long cur[SSSP_W_BATCH];
#pragma unroll
    for (int j = 0; j < SSSP_W_BATCH; ++j) cur[j] = go[j] ? __ldcg(key + t[j]) : 0ull;
    bool near[SSSP_W_BATCH], far[SSSP_W_BATCH];
#pragma unroll
    for (int j = 0; j < SSSP_W_BATCH; ++j) {
        near[j] = far[j] = false;
        if (go[j] && nd[j] < sssp_w_dist(cur[j])) {
            const bool below = nd[j] < m.T;
            const unsigned long long kt =
                ((unsigned long long)nd[j] << 32) | (below ? m.stamp_near : m.stamp_far);
            cur[j] = atomicMin(key + t[j], kt);
            if (sssp_w_dist(cur[j]) > nd[j]) {
                if (below) {
                    near[j] = (unsigned int)cur[j] != m.stamp_near;
                } else {
                    fmin = min(fmin, nd[j]);
                    far[j] = true;
                }
            }
        }
    }
#pragma unroll
    for (int j = 0; j < SSSP_W_BATCH; ++j) {
        if (far[j]) {
            const unsigned int bit = 1u << (t[j] & 31);
            far[j] = (atomicOr(infar + (t[j] >> 5), bit) & bit) == 0u;
        }
    }
    sssp_w_append(m.next_count, m.next, near, t);
    sssp_w_append(m.far_count, m.far, far, t);
}

extern "C" __global__ void sssp_w_init(SSSP_W_ARGS, unsigned int *cnt, unsigned long long delta, int source,
                                       int limit) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    const long long words = ((long long)n + 31) / 32;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        key[i] = i == source ? 0ull : 0xFFFFFFFFFFFFFFFFull;
        pushed[i] = SSSP_W_INF;
        if (i < words) infar[i] = 0u;
    }
    if (blockIdx.x == 0 && threadIdx.x < SSSP_W_WORDS) {
        const int i = threadIdx.x;
        unsigned int v = 0u;
        if (i == SSSP_W_MODE) v = SSSP_W_STEP;
        if (i == SSSP_W_K) v = 1u;
        if (i == SSSP_W_R) v = 1u;  // the raise that puts the source in the first near list
        if (i == SSSP_W_NL) v = 1u;
        if (i == SSSP_W_T) v = sssp_w_threshold(0u, delta);
        if (i == SSSP_W_FMIN || i == SSSP_W_FMIN_NEXT) v = SSSP_W_INF;
        if (i == SSSP_W_LIMIT) v = (unsigned int)limit;
        if (i == SSSP_W_DELTA) v = delta < SSSP_W_INF ? (unsigned int)delta : SSSP_W_INF;
        w[i] = v;
        if (i == 0) lists[n] = source;  // half 1: step 1's list
    }
    if (blockIdx.x == 0 && threadIdx.x < SSSP_NF_WORDS) cnt[threadIdx.x] = 0u;
}

// Queues the row [b, e) of node v (distance du) as hub chunks of SSSP_W_CHUNK edges.
__device__ __forceinline__ void sssp_w_enqueue_hub(unsigned long long *hubs, unsigned int *w, int v, unsigned int du,
                                                   long long b, long long e) {
    const long long chunks = (e - b + SSSP_W_CHUNK - 1) / SSSP_W_CHUNK;
    const unsigned int at = atomicAdd(w + SSSP_W_HUBS, (unsigned int)chunks);
    for (long long c = 0; c < chunks; ++c) {
        hubs[2 * ((long long)at + c)] = ((unsigned long long)du << 32) | (unsigned int)v;
        hubs[2 * ((long long)at + c) + 1] = (unsigned long long)(b + c * SSSP_W_CHUNK);
    }
}

// Which part of a row a walk takes: all of it, or (SSSP_W_SPLIT, rows partitioned, `light` set)
// its light edges in a step and its heavy ones in the heavy move.
struct SsspWRows {
    const int *light = nullptr;
    bool heavy = false;
    // The edges [b, e) of node v this walk takes.
    __device__ __forceinline__ void range(const long long *__restrict__ indptr, int v, long long &b,
                                          long long &e) const {
        b = __ldg(indptr + v);
        e = __ldg(indptr + v + 1);
        if (light != nullptr) {
            const long long mid = b + __ldg(light + v);
            if (heavy) b = mid;
            else e = mid;
        }
    }
    // Where the part of node v's row that this walk takes ends (a hub chunk's bound).
    __device__ __forceinline__ long long end(const long long *__restrict__ indptr, int v) const {
        if (light == nullptr || heavy) return __ldg(indptr + v + 1);
        return __ldg(indptr + v) + __ldg(light + v);
    }
};

// Each lane holds one row (its first edge beg, deg <= SSSP_W_HUB_DEGREE edges, node u at distance
// du; deg 0 for none) and the warp walks the 32 rows as one run of edges, 32 x SSSP_W_BATCH at a
// time: `edges(go, t, nd, du, u)` gets a batch (go[j]: edge j is real, t[j] its target, nd[j] =
// du[j] + its weight, from node u[j]). Called by every lane of the warp.
template <class Edges>
__device__ __forceinline__ void sssp_w_run(const int *__restrict__ indices, const unsigned int *__restrict__ weights,
                                           long long beg, int deg, unsigned int du, int u, Edges &edges) {
    const int lane = threadIdx.x & 31;
    int incl = deg;  // an inclusive scan of the degrees
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        const int x = __shfl_up_sync(SSSP_W_FULL, incl, o);
        if (lane >= o) incl += x;
    }
    const int excl = incl - deg;
    const int total = __shfl_sync(SSSP_W_FULL, incl, 31);
    for (int x0 = 0; x0 < total; x0 += 32 * SSSP_W_BATCH) {
        bool go[SSSP_W_BATCH];
        int t[SSSP_W_BATCH], src[SSSP_W_BATCH];
        unsigned int nd[SSSP_W_BATCH], ds[SSSP_W_BATCH];
#pragma unroll
        for (int j = 0; j < SSSP_W_BATCH; ++j) {
            const int x = x0 + j * 32 + lane;
            // The row of edge x: the last lane whose run starts at or before it (a lane of
            // degree 0 starts where the next one does, so the last such lane has edges).
            int o = 0;
#pragma unroll
            for (int s = 16; s > 0; s >>= 1) {
                const int start = __shfl_sync(SSSP_W_FULL, excl, o + s);
                if (start <= x) o += s;
            }
            const long long b = __shfl_sync(SSSP_W_FULL, beg, o);
            ds[j] = __shfl_sync(SSSP_W_FULL, du, o);
            src[j] = __shfl_sync(SSSP_W_FULL, u, o);
            const int start = __shfl_sync(SSSP_W_FULL, excl, o);
            go[j] = x < total;
            const long long e = b + (x - start);
            t[j] = go[j] ? __ldg(indices + e) : 0;
            nd[j] = go[j] ? ds[j] + __ldg(weights + e) : 0u;
        }
        edges(go, t, nd, ds, src);
    }
}

// The hub chunks queued in w[SSSP_W_HUBS], a chunk per warp, with `edges` as in sssp_w_run; a
// chunk ends where the part of the row that `rows` takes does.
template <class Edges>
__device__ __forceinline__ void sssp_w_chunks(const long long *__restrict__ indptr, const int *__restrict__ indices,
                                              const unsigned int *__restrict__ weights, const unsigned long long *hubs,
                                              const unsigned int *w, Edges &edges, SsspWRows rows = SsspWRows{}) {
    const unsigned int nh = sssp_w_word(w, SSSP_W_HUBS);
    const int lane = threadIdx.x & 31;
    const long long warp = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const long long nwarps = ((long long)gridDim.x * blockDim.x) >> 5;
    for (long long c = warp; c < nh; c += nwarps) {
        const unsigned long long head = __ldcg(hubs + 2 * c);
        const long long first = (long long)__ldcg(hubs + 2 * c + 1);
        const int v = (int)(unsigned int)head;
        const unsigned int du = (unsigned int)(head >> 32);
        const long long end = min(first + SSSP_W_CHUNK, rows.end(indptr, v));
        for (long long e0 = first; e0 < end; e0 += 32 * SSSP_W_BATCH) {
            bool go[SSSP_W_BATCH];
            int t[SSSP_W_BATCH], src[SSSP_W_BATCH];
            unsigned int nd[SSSP_W_BATCH], ds[SSSP_W_BATCH];
#pragma unroll
            for (int j = 0; j < SSSP_W_BATCH; ++j) {
                const long long e = e0 + j * 32 + lane;
                go[j] = e < end;
                t[j] = go[j] ? __ldg(indices + e) : 0;
                nd[j] = go[j] ? du + __ldg(weights + e) : 0u;
                ds[j] = du;
                src[j] = v;
            }
            edges(go, t, nd, ds, src);
        }
    }
}

// Which part of the rows the current move takes (SSSP_W_SPLIT: light in a step, heavy in the
// heavy move; `light` is null when the rows are not partitioned).
__device__ __forceinline__ SsspWRows sssp_w_rows(const int *light, unsigned int mode) {
    SsspWRows rows;
#if SSSP_W_SPLIT
    rows.light = light;
    rows.heavy = light != nullptr && mode == SSSP_W_HEAVY;
#endif
    return rows;
}

__device__ __forceinline__ bool sssp_w_pushes(unsigned int mode) {
    return mode == SSSP_W_STEP || (SSSP_W_SPLIT && mode == SSSP_W_HEAVY);
}

// The bucket's list (SSSP_W_SPLIT): the half of the piles the next raise fills.
__device__ __forceinline__ int *sssp_w_bucket(int *piles, const unsigned int *w, int n) {
    return piles + (long long)(sssp_w_word(w, SSSP_W_PILE) ^ 1u) * n;
}

// One step: the entries of the near list, their rows walked by warps as runs of edges; or the
// heavy move (SSSP_W_SPLIT): the bucket's nodes, their heavy edges.
extern "C" __global__ void SSSP_W_BOUNDS
    sssp_w_step(SSSP_W_ARGS) {
    const unsigned int mode = sssp_w_word(w, SSSP_W_MODE);
    if (!sssp_w_pushes(mode)) return;
    const SsspWMove m = sssp_w_move(lists, piles, w, n);
    const SsspWRows rows = sssp_w_rows(light, mode);
    // Rows not partitioned (no split, or Δ at infinity): no bucket list, no heavy move.
    const bool collect = rows.light != nullptr && !rows.heavy;
    int *B = sssp_w_bucket(piles, w, n);
    const unsigned int nl = sssp_w_word(w, rows.heavy ? SSSP_W_BUCKET : SSSP_W_NL);
    const int *L = rows.heavy ? B : lists + (long long)(m.k & 1u) * n;
    const int lane = threadIdx.x & 31;
    const long long warp = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const long long nwarps = ((long long)gridDim.x * blockDim.x) >> 5;
    unsigned int fmin = SSSP_W_INF;
    auto lower = [&](const bool(&go)[SSSP_W_BATCH], const int(&t)[SSSP_W_BATCH],
                     const unsigned int(&nd)[SSSP_W_BATCH], const unsigned int(&)[SSSP_W_BATCH],
                     const int(&)[SSSP_W_BATCH]) { sssp_w_lower(key, infar, m, go, t, nd, fmin); };
    for (long long base = warp * 32; base < nl; base += nwarps * 32) {
        const long long i = base + lane;
        unsigned int du = 0u;
        long long beg = 0;
        int deg = 0, v = 0;
        bool first = false;  // pushed for the first time: joins the bucket's list
        if (i < nl) {
            v = __ldcg(L + i);
            long long b, e;
            rows.range(indptr, v, b, e);
            du = sssp_w_dist(__ldcg(key + v));
            const unsigned int before = rows.heavy ? 0u : __ldcg(pushed + v);
            if (rows.heavy || du < before) {  // the heavy move: each node of the bucket once
                if (!rows.heavy) __stcg(pushed + v, du);
                first = collect && before == SSSP_W_INF;
                beg = b;
                if (e - b > SSSP_W_HUB_DEGREE) sssp_w_enqueue_hub(hubs, w, v, du, b, e);
                else deg = (int)(e - b);
            }
        }
        if (collect) {
            const unsigned int at = sssp_w_slot(w + SSSP_W_BUCKET, first);
            if (first) B[at] = v;
        }
        sssp_w_run(indices, weights, beg, deg, du, v, lower);
    }
    fmin = sssp_w_warp_min(fmin);
    if (lane == 0 && fmin != SSSP_W_INF) atomicMin(w + SSSP_W_FMIN, fmin);
}

// The hub queue of the step that just ran: a chunk of SSSP_W_CHUNK edges per warp.
extern "C" __global__ void SSSP_W_BOUNDS
    sssp_w_hubs(SSSP_W_ARGS) {
    const unsigned int mode = sssp_w_word(w, SSSP_W_MODE);
    if (!sssp_w_pushes(mode) || sssp_w_word(w, SSSP_W_HUBS) == 0u) return;
    const SsspWMove m = sssp_w_move(lists, piles, w, n);
    unsigned int fmin = SSSP_W_INF;
    auto lower = [&](const bool(&go)[SSSP_W_BATCH], const int(&t)[SSSP_W_BATCH],
                     const unsigned int(&nd)[SSSP_W_BATCH], const unsigned int(&)[SSSP_W_BATCH],
                     const int(&)[SSSP_W_BATCH]) { sssp_w_lower(key, infar, m, go, t, nd, fmin); };
    sssp_w_chunks(indptr, indices, weights, hubs, w, lower, sssp_w_rows(light, mode));
    fmin = sssp_w_warp_min(fmin);
    if ((threadIdx.x & 31) == 0 && fmin != SSSP_W_INF) atomicMin(w + SSSP_W_FMIN, fmin);
}

// The predecessor tree after the solve (the engine's rule, as sssp_nf_tree: pred[v] = the smallest
// u with d(u) < d(v) and d(u) + w(u, v) == d(v), in the packed key's low word), its work dealt out
// as a step's: every reached node's row, rows of hubs in chunks (sssp_w_tree_hubs). A hub's row
// walked by one lane group took most of a Kronecker graph's solve.
__device__ __forceinline__ void sssp_w_parent(unsigned long long *key, const bool (&go)[SSSP_W_BATCH],
                                              const int (&t)[SSSP_W_BATCH], const unsigned int (&nd)[SSSP_W_BATCH],
                                              const unsigned int (&du)[SSSP_W_BATCH], const int (&u)[SSSP_W_BATCH]) {
#pragma unroll
    for (int j = 0; j < SSSP_W_BATCH; ++j) {
        if (!go[j]) continue;
        const unsigned int dv = sssp_w_dist(__ldcg(key + t[j]));
        if (du[j] < dv && dv != SSSP_W_INF && nd[j] == dv)
            atomicMin(reinterpret_cast<unsigned int *>(key + t[j]), (unsigned int)u[j]);  // the low word
    }
}

extern "C" __global__ void SSSP_W_BOUNDS
    sssp_w_tree(SSSP_W_ARGS) {
    const long long warp = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const long long nwarps = ((long long)gridDim.x * blockDim.x) >> 5;
    const int lane = threadIdx.x & 31;
    auto parent = [&](const bool(&go)[SSSP_W_BATCH], const int(&t)[SSSP_W_BATCH],
                      const unsigned int(&nd)[SSSP_W_BATCH], const unsigned int(&du)[SSSP_W_BATCH],
                      const int(&u)[SSSP_W_BATCH]) { sssp_w_parent(key, go, t, nd, du, u); };
    for (long long base = warp * 32; base < n; base += nwarps * 32) {
        const long long i = base + lane;
        unsigned int du = 0u;
        long long beg = 0;
        int deg = 0;
        if (i < n) {
            const long long b = __ldg(indptr + i), e = __ldg(indptr + i + 1);
            du = sssp_w_dist(__ldcg(key + i));
            if (du != SSSP_W_INF && e > b) {
                beg = b;
                if (e - b > SSSP_W_HUB_DEGREE) sssp_w_enqueue_hub(hubs, w, (int)i, du, b, e);
                else deg = (int)(e - b);
            }
        }
        sssp_w_run(indices, weights, beg, deg, du, (int)i, parent);
    }
}

extern "C" __global__ void SSSP_W_BOUNDS
    sssp_w_tree_hubs(SSSP_W_ARGS) {
    auto parent = [&](const bool(&go)[SSSP_W_BATCH], const int(&t)[SSSP_W_BATCH],
                      const unsigned int(&nd)[SSSP_W_BATCH], const unsigned int(&du)[SSSP_W_BATCH],
                      const int(&u)[SSSP_W_BATCH]) { sssp_w_parent(key, go, t, nd, du, u); };
    sssp_w_chunks(indptr, indices, weights, hubs, w, parent);
}

// A raise: the far pile split at the new threshold T (set by the advance before it). Entries
// below T go to the near list of the coming step, the others to the other pile (with its exact
// minimum); entries pushed at their current distance since they were piled are dropped.
extern "C" __global__ void SSSP_W_BOUNDS
    sssp_w_raise(SSSP_W_ARGS) {
    if (sssp_w_word(w, SSSP_W_MODE) != SSSP_W_RAISE) return;
    const unsigned int k = sssp_w_word(w, SSSP_W_K), T = sssp_w_word(w, SSSP_W_T);
    const unsigned int pile = sssp_w_word(w, SSSP_W_PILE), nfar = sssp_w_word(w, SSSP_W_FAR);
    const int *far = piles + (long long)pile * n;
    int *kept = piles + (long long)(pile ^ 1u) * n;
    int *L = lists + (long long)(k & 1u) * n;
    const int lane = threadIdx.x & 31;
    const long long warp = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const long long nwarps = ((long long)gridDim.x * blockDim.x) >> 5;
    unsigned int fmin = SSSP_W_INF;
    for (long long base = warp * 32; base < nfar; base += nwarps * 32) {
        const long long i = base + lane;
        bool to_list = false, keep = false;
        int v = 0;
        if (i < nfar) {
            v = __ldcg(far + i);
            const unsigned int d = sssp_w_dist(__ldcg(key + v));
            if (d >= __ldcg(pushed + v) || d < T) {
                atomicAnd(infar + (v >> 5), ~(1u << (v & 31)));
                to_list = d < __ldcg(pushed + v);
            } else {
                keep = true;
                fmin = min(fmin, d);
            }
        }
        const unsigned int s = sssp_w_slot(w + SSSP_W_NEXT, to_list);
        if (to_list) L[s] = v;
        const unsigned int f = sssp_w_slot(w + SSSP_W_KEPT, keep);
        if (keep) kept[f] = v;
    }
    fmin = sssp_w_warp_min(fmin);
    if (lane == 0 && fmin != SSSP_W_INF) atomicMin(w + SSSP_W_FMIN_NEXT, fmin);
}

// One thread: after the move `after` (SSSP_W_STEP or SSSP_W_RAISE) ran, choose the next one (the
// heavy move runs where a step does, so `after` SSSP_W_STEP follows it too). At the end it writes
// what the result pass reads: the control words (steps, raises, done) and near-far's counters
// (the largest list, the entries summed).
extern "C" __global__ void sssp_w_advance(unsigned int *w, unsigned int *cnt, unsigned int *ctrl,
                                          unsigned long long delta, int after) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    volatile unsigned int *vw = w;
    const unsigned int was = vw[SSSP_W_MODE];
    const bool heavy = SSSP_W_SPLIT && was == SSSP_W_HEAVY;
    if (was != (unsigned int)after && !(heavy && after == SSSP_W_STEP)) return;
    unsigned int k = vw[SSSP_W_K], r = vw[SSSP_W_R];
    if (after == SSSP_W_STEP) {
        const unsigned int nl = vw[heavy ? SSSP_W_BUCKET : SSSP_W_NL];
        vw[SSSP_W_MAXL] = max(vw[SSSP_W_MAXL], nl);
        unsigned long long sum = ((unsigned long long)vw[SSSP_W_SUM + 1] << 32) | vw[SSSP_W_SUM];
        sum += nl;
        vw[SSSP_W_SUM] = (unsigned int)sum;
        vw[SSSP_W_SUM + 1] = (unsigned int)(sum >> 32);
        vw[SSSP_W_K] = ++k;
    } else {
        vw[SSSP_W_R] = ++r;
        vw[SSSP_W_PILE] = vw[SSSP_W_PILE] ^ 1u;
        vw[SSSP_W_FAR] = vw[SSSP_W_KEPT];
        vw[SSSP_W_KEPT] = 0u;
        vw[SSSP_W_FMIN] = vw[SSSP_W_FMIN_NEXT];
        vw[SSSP_W_FMIN_NEXT] = SSSP_W_INF;
    }
    const unsigned int next = vw[SSSP_W_NEXT];
    vw[SSSP_W_NL] = next;
    vw[SSSP_W_NEXT] = 0u;
    vw[SSSP_W_HUBS] = 0u;
    if (heavy) vw[SSSP_W_BUCKET] = 0u;
    unsigned int mode = SSSP_W_DONE;
    if (next > 0u) {
        mode = SSSP_W_STEP;
    } else if (SSSP_W_SPLIT && after == SSSP_W_STEP && !heavy && vw[SSSP_W_BUCKET] > 0u) {
        mode = SSSP_W_HEAVY;  // the bucket is empty: its heavy edges, before the raise
    } else if (vw[SSSP_W_FAR] > 0u) {
        mode = SSSP_W_RAISE;
        vw[SSSP_W_T] = sssp_w_threshold(vw[SSSP_W_FMIN], delta);
    }
    const bool over = k > vw[SSSP_W_LIMIT];
    if (over) mode = SSSP_W_DONE;
    if (mode == SSSP_W_DONE) {
        ctrl[SSSP_CTRL_PHASE] = k;
        ctrl[SSSP_CTRL_BUCKETS] = r;
        ctrl[SSSP_CTRL_DONE] = over ? 0u : 1u;
        cnt[SSSP_NF_MAXL] = vw[SSSP_W_MAXL];
        cnt[SSSP_NF_SUM] = vw[SSSP_W_SUM];
        cnt[SSSP_NF_SUM + 1] = vw[SSSP_W_SUM + 1];
    }
    __threadfence();
    vw[SSSP_W_MODE] = mode;
}

// After the last move, queued once by the host behind the rounds: the stamps in the keys' low
// words make way for the predecessor (the tree pass). (It ran in every round, behind a seal word
// that kept it from running twice: two launches a round for nothing.)
extern "C" __global__ void sssp_w_finish(unsigned long long *key, const unsigned int *w, int n) {
    if (sssp_w_word(w, SSSP_W_MODE) != SSSP_W_DONE) return;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        key[i] |= (unsigned long long)SSSP_NO_PRED;
}

// Once, when the solver is made (SSSP_W_SPLIT with Δ below infinity): each row's edges into
// `out_*` with its light edges (w < delta) first and its heavy ones after, both in their order,
// and light[v] = its light edges. A warp per row, 32 edges at a time: a ballot places them.
extern "C" __global__ void sssp_w_partition(const long long *__restrict__ indptr, const int *__restrict__ indices,
                                            const unsigned int *__restrict__ weights, int *light, int *out_indices,
                                            unsigned int *out_weights, int n, unsigned int delta) {
    const int lane = threadIdx.x & 31;
    const unsigned int below = (1u << lane) - 1u;
    const long long warp = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const long long nwarps = ((long long)gridDim.x * blockDim.x) >> 5;
    for (long long v = warp; v < n; v += nwarps) {
        const long long b = indptr[v], e = indptr[v + 1];
        long long lights = 0;
        for (long long x = b + lane; x < e; x += 32) lights += weights[x] < delta;
        for (int o = 16; o > 0; o >>= 1) lights += __shfl_xor_sync(SSSP_W_FULL, lights, o);
        if (lane == 0) light[v] = (int)lights;
        long long at_light = b, at_heavy = b + lights;
        for (long long x0 = b; x0 < e; x0 += 32) {
            const long long x = x0 + lane;
            const bool real = x < e;
            const unsigned int wt = real ? weights[x] : 0u;
            const bool is_light = real && wt < delta;
            const unsigned int lm = __ballot_sync(SSSP_W_FULL, is_light);
            const unsigned int hm = __ballot_sync(SSSP_W_FULL, real && !is_light);
            if (real) {
                const long long to = is_light ? at_light + __popc(lm & below) : at_heavy + __popc(hm & below);
                out_indices[to] = indices[x];
                out_weights[to] = wt;
            }
            at_light += __popc(lm);
            at_heavy += __popc(hm);
        }
    }
}
