// Engine 2: Crauser's parallel Dijkstra (and its IN, IN+OUT and Martín criteria) with device
// resident phases and work-efficient steps.
//
// A phase p has two steps:
//   relax   the frontier F_{p-1} (nodes settled in phase p-1, a queue) pushes along its out-edges
//           (or, in the predecessors variant, unsettled nodes pull from frontier predecessors).
//           Every improvement also lowers the phase's thresholds: the minimum of the OUT key
//           d(v) + ω(v) and of d(v) over the improved unsettled nodes. A node reached for the
//           first time is appended to the fringe queue R_p (warp-aggregated appends).
//   settle  scans R_p (the reached, unsettled nodes) once: a node that meets the criterion is
//           settled and appended to F_p, every other one is carried into R_{p+1} and folds its
//           keys into phase p+1's thresholds. That replaces the paper's separate min pass over
//           all n nodes: the threshold of phase p+1 is min(keys of the carried nodes, keys of
//           the nodes improved by relax p+1), which is exactly Crauser's Δ because distances
//           only fall.
//   bound   relax skips an edge (u, v, w) without reading v when d(u) + w exceeds every
//           unsettled node's tentative distance: the settle step before folds the largest
//           distance it carries into R_p (ctrl slot by parity) when every node had been reached
//           by then, else +inf (no bound). Distances only fall, and a candidate above that can
//           neither lower nor tie any unsettled key (settled ones take no update). Settle reads
//           the reached count while nothing raises it; relax must not read it, since its own
//           threads raise it: a thread that saw the count reach n mid-step took the carried
//           maximum as its bound, which misses the nodes first reached in that step, and
//           skipped their improving or tying candidates (the H200 lost predecessor ties on a
//           mesh, run 86). The skipped edges are exactly those
//           the pre-read of the target's key would have rejected, so results are unchanged;
//           on dense graphs most edges of the late, large phases are skipped this way, and
//           with the OUT criterion a frontier node whose d(u) + ω(u) is above it is skipped
//           whole. The solver sorts every row by weight once (sssp_e_sort_rows), so a lane
//           stops at its first edge above the bound instead of reading every weight.
//   batches a lane relaxes SSSP_RELAX_BATCH edges at a time, each round of loads and atomics
//           issued for all of them before it waits (sssp_push_edges).
// The phase loop runs in one of three ways (chosen by the host, the same steps in each):
//   host        the host launches relax and settle per phase; the last settle block advances
//               the phase counter on the device, so the host only polls every few phases;
//   graph       the same two kernels as the body of a CUDA graph WHILE node; the last settle
//               block clears the loop condition when nothing was settled;
//   persistent  one launch, a software grid barrier between steps (grid sized by the host from
//               occupancy so every block is resident), and phases whose work fits one block run
//               in block 0 alone with block barriers only.
//
// Settling criteria (compile time):
//   SSSP_OUT 1: settle v if d(v) <= min{d(u) + ω(u) : u unsettled}            (Crauser OUT)
//   SSSP_IN  1: settle v if d(v) - ι(v) <= min{d(u) : u unsettled}            (Crauser IN)
//   both: either rule (IN+OUT); neither: d(v) == min{d(u)} (Martín).
// ω(v) is v's smallest outgoing weight, ι(v) its smallest incoming one (∞ when none).
//
// Distances: SSSP_DIST_BITS 32 or 64 unsigned integers, or SSSP_FLOAT 1 for float64 distances
// (float32 or float64 weights). Non-negative IEEE doubles order like their bit patterns read as
// unsigned integers, so one atomicMin on the bits serves every kind. With 32-bit distances the
// distance and the predecessor share one 64-bit word (distance high, predecessor low): one
// atomicMin records both, and among equal distances the smallest predecessor id wins. Because a
// node is relaxed only while its target is unsettled, the recorded predecessor is the smallest u
// with d(u) + w(u, v) == d(v) settled in an earlier phase than v, the rule of the CPU
// reference. Wider distances keep the predecessor in a separate pass (sssp_e_tree) with the same
// rule.
//
// Memory visibility: arrays written during a solve are read with ld.global.cg (L2, never a stale
// L1 line from another multiprocessor); the graph itself is read-only and may live in L1.

#include <cooperative_groups.h>
namespace cg = cooperative_groups;

#ifndef SSSP_DIST_BITS
#define SSSP_DIST_BITS 32
#endif
#ifndef SSSP_WEIGHT_BITS
#define SSSP_WEIGHT_BITS 32
#endif
#ifndef SSSP_FLOAT
#define SSSP_FLOAT 0
#endif
#ifndef SSSP_OUT
#define SSSP_OUT 1
#endif
#ifndef SSSP_IN
#define SSSP_IN 0
#endif
#ifndef SSSP_RELAX_LANES
#define SSSP_RELAX_LANES 1
#endif
#ifndef SSSP_PULL
#define SSSP_PULL 0
#endif
#ifndef SSSP_BIG_DEGREE
#define SSSP_BIG_DEGREE 1024  // a frontier node with more edges is relaxed by its whole block
#endif
#define SSSP_BIG_STASH 64

#if (SSSP_RELAX_LANES & (SSSP_RELAX_LANES - 1)) != 0 || SSSP_RELAX_LANES < 1 || SSSP_RELAX_LANES > 32
#error "SSSP_RELAX_LANES must be a power of two in [1, 32]"
#endif

#define SSSP_NEED_DMIN (SSSP_IN || !SSSP_OUT)
#define SSSP_FULL_MASK 0xFFFFFFFFu

// ---- distance kinds ------------------------------------------------------------------------
#if SSSP_FLOAT
#if SSSP_DIST_BITS != 64
#error "float distances are float64"
#endif
typedef double sssp_d_t;  // arithmetic type
typedef unsigned long long sssp_bits_t;  // stored bits (atomicMin on these)
#if SSSP_WEIGHT_BITS == 32
typedef float sssp_w_t;
#else
typedef double sssp_w_t;
#endif
#define SSSP_INF_BITS 0x7FF0000000000000ull  // +inf
__device__ __forceinline__ sssp_d_t sssp_val(sssp_bits_t b) { return __longlong_as_double((long long)b); }
__device__ __forceinline__ sssp_bits_t sssp_bits(sssp_d_t d) { return (sssp_bits_t)__double_as_longlong(d); }
__device__ __forceinline__ sssp_d_t sssp_add(sssp_d_t a, sssp_d_t b) { return a + b; }  // inf stays inf
#else
#if SSSP_DIST_BITS == 32
typedef unsigned int sssp_d_t;
#define SSSP_INF_BITS 0xFFFFFFFFu
#elif SSSP_DIST_BITS == 64
typedef unsigned long long sssp_d_t;
#define SSSP_INF_BITS 0xFFFFFFFFFFFFFFFFull
#else
#error "SSSP_DIST_BITS must be 32 or 64"
#endif
typedef sssp_d_t sssp_bits_t;
#if SSSP_WEIGHT_BITS == 32
typedef unsigned int sssp_w_t;
#elif SSSP_WEIGHT_BITS == 64
typedef unsigned long long sssp_w_t;
#else
#error "SSSP_WEIGHT_BITS must be 32 or 64"
#endif
#if SSSP_WEIGHT_BITS > SSSP_DIST_BITS
#error "SSSP_WEIGHT_BITS cannot exceed SSSP_DIST_BITS"
#endif
__device__ __forceinline__ sssp_d_t sssp_val(sssp_bits_t b) { return b; }
__device__ __forceinline__ sssp_bits_t sssp_bits(sssp_d_t d) { return d; }
// The host sizes distances so that d + ω never overflows for reachable nodes; the saturation
// guards the infinite operands (ω or ι of nodes without edges).
__device__ __forceinline__ sssp_d_t sssp_add(sssp_d_t a, sssp_d_t b) {
    return (a == SSSP_INF_BITS || b == SSSP_INF_BITS) ? (sssp_d_t)SSSP_INF_BITS : a + b;
}
#endif

#define SSSP_PACKED (!SSSP_FLOAT && SSSP_DIST_BITS == 32)
#if SSSP_PACKED
typedef unsigned long long sssp_key_t;  // distance << 32 | predecessor
#define SSSP_KEY_INF 0xFFFFFFFFFFFFFFFFull
#else
typedef sssp_bits_t sssp_key_t;
#define SSSP_KEY_INF SSSP_INF_BITS
#endif

// ---- the argument list every engine kernel takes (the contract in kernels/__init__.py) --------
// cnt[2p] = |F_p|, cnt[2p+1] = |R_p|; thr[2p] = OUT threshold of phase p, thr[2p+1] = min d.
// ctrl[0] phase, [1] done, [2..3] grid barrier arrivals (64-bit), [4] blocks finished
// (settle kernel), [5] abort (barrier timeout), [6] phase limit, [8] nodes reached (read by
// settle only), [10..11] and [12..13] the relax bound (64-bit bits, by phase parity: settle p
// folds the largest carried distance into slot (p+1) & 1, or +inf while [8] is below n; relax p
// reads slot p & 1 and clears the other).
#define SSSP_ARGS                                                                               \
    const long long *__restrict__ indptr, const int *__restrict__ indices,                     \
        const sssp_w_t *__restrict__ weights, const sssp_d_t *__restrict__ omega,               \
        const sssp_d_t *__restrict__ iota, int *settled_at, sssp_key_t *key, int *pred,         \
        int *qF, int *qR, unsigned int *cnt, sssp_bits_t *thr, unsigned int *ctrl, int n
#define SSSP_PASS indptr, indices, weights, omega, iota, settled_at, key, pred, qF, qR, cnt, thr, ctrl, n

// ---- small helpers -------------------------------------------------------------------------
// Block barrier. Several steps run a section in thread 0 alone (the grid barrier's spin, counter
// resets) right before a barrier; the warp is reconverged first, so that the barrier is never
// reached by a split warp (compute-sanitizer's synccheck reported exactly that, and with it the
// block-local phases lost fringe entries on the H200).
__device__ __forceinline__ void sssp_block_sync() {
    __syncwarp();
    __syncthreads();
}
template <typename T> __device__ __forceinline__ T sssp_ldcg(const T *p) { return __ldcg(p); }

__device__ __forceinline__ sssp_d_t sssp_key_dist(sssp_key_t k) {
#if SSSP_PACKED
    return (sssp_d_t)(k >> 32);
#else
    return sssp_val(k);
#endif
}

__device__ __forceinline__ sssp_d_t sssp_dist_of(const sssp_key_t *key, int v) {
    return sssp_key_dist(sssp_ldcg(key + v));
}

__device__ __forceinline__ sssp_bits_t sssp_min_bits(sssp_bits_t a, sssp_bits_t b) { return a < b ? a : b; }

// Warp minimum, then one atomicMin per warp. Every lane of the warp must call it.
__device__ __forceinline__ void sssp_fold_min(sssp_bits_t *dst, sssp_bits_t v) {
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) v = sssp_min_bits(v, __shfl_xor_sync(SSSP_FULL_MASK, v, off));
    if ((threadIdx.x & 31) == 0 && v != SSSP_INF_BITS) atomicMin(dst, v);
}

// Index for one appended element; the threads that append at the same time share one atomic.
__device__ __forceinline__ unsigned int sssp_append_slot(unsigned int *counter) {
    cg::coalesced_group g = cg::coalesced_threads();
    unsigned int base = 0;
    if (g.thread_rank() == 0) base = atomicAdd(counter, g.size());
    return g.shfl(base, 0) + g.thread_rank();
}

// Adds one per calling thread to *counter; the threads that call at the same time share one
// atomic, and nothing waits for its result.
__device__ __forceinline__ void sssp_count(unsigned int *counter) {
    cg::coalesced_group g = cg::coalesced_threads();
    if (g.thread_rank() == 0) atomicAdd(counter, g.size());
}

// The relax bound (see the top of this file): nodes reached, whether the rows ascend by weight
// (sssp_e_sort_rows), and two 64-bit slots by parity.
__device__ __forceinline__ unsigned long long *sssp_bound_slots(unsigned int *ctrl) {
    return reinterpret_cast<unsigned long long *>(ctrl + SSSP_CTRL_BOUND);
}
// Warp maximum, then one atomicMax per warp. Every lane of the warp must call it.
__device__ __forceinline__ void sssp_fold_max(unsigned long long *dst, sssp_bits_t v) {
    unsigned long long x = v;
    for (int off = 16; off > 0; off >>= 1) {
        const unsigned long long o = __shfl_xor_sync(SSSP_FULL_MASK, x, off);
        x = x > o ? x : o;
    }
    if ((threadIdx.x & 31) == 0 && x != 0) atomicMax(dst, x);
}

// Thresholds a node contributes when it stays unsettled with distance d.
struct SsspKeys {
    sssp_bits_t out, dmin;
};
__device__ __forceinline__ void sssp_keys_init(SsspKeys &k) { k.out = SSSP_INF_BITS; k.dmin = SSSP_INF_BITS; }
__device__ __forceinline__ void sssp_keys_add(SsspKeys &k, sssp_d_t d, const sssp_d_t *omega, int v) {
#if SSSP_OUT
    k.out = sssp_min_bits(k.out, sssp_bits(sssp_add(d, __ldg(omega + v))));
#endif
#if SSSP_NEED_DMIN
    k.dmin = sssp_min_bits(k.dmin, sssp_bits(d));
#endif
}
// ---- queues ---------------------------------------------------------------------------------
// The steps are written once against a queue policy. SsspGridQ keeps every queue, counter and
// threshold in global memory (any number of blocks; the per-phase history doubles as counters).
// SsspLocalQ serves the persistent loop's block-local phases: block 0 alone keeps the counters
// and thresholds in shared memory and the first `cap` entries of each queue there too (a queue
// that grows past them spills into the global buffer at the same indices), so a small phase
// makes few round trips to L2.
struct SsspGridQ {
    int *qF, *qR;
    unsigned int *cnt;
    sssp_bits_t *thr;
    const sssp_key_t *key;
    int n;
    __device__ unsigned int nF(int phase) const { return sssp_ldcg(cnt + 2 * (long long)phase); }
    __device__ unsigned int nR(int phase) const { return sssp_ldcg(cnt + 2 * (long long)phase + 1); }
    __device__ int F(int phase, long long i) const { return sssp_ldcg(qF + (long long)(phase & 1) * n + i); }
    __device__ sssp_d_t Fdist(int, long long, int u) const { return sssp_dist_of(key, u); }
    __device__ int R(int phase, long long i) const { return sssp_ldcg(qR + (long long)(phase & 1) * n + i); }
    __device__ void pushF(int phase, int v, sssp_d_t) {
        qF[(long long)(phase & 1) * n + sssp_append_slot(cnt + 2 * (long long)phase)] = v;
    }
    __device__ void pushR(int phase, int v) {
        qR[(long long)(phase & 1) * n + sssp_append_slot(cnt + 2 * (long long)phase + 1)] = v;
    }
    __device__ sssp_bits_t thr_out(int phase) const { return sssp_ldcg(thr + 2 * (long long)phase); }
    __device__ sssp_bits_t thr_min(int phase) const { return sssp_ldcg(thr + 2 * (long long)phase + 1); }
    __device__ void fold(int phase, const SsspKeys &k) {
#if SSSP_OUT
        sssp_fold_min(thr + 2 * (long long)phase, k.out);
#endif
#if SSSP_NEED_DMIN
        sssp_fold_min(thr + 2 * (long long)phase + 1, k.dmin);
#endif
    }
};

struct SsspLocalQ {
    int *qF, *qR;
    const sssp_key_t *key;
    int n, cap;
    int *sF, *sR;          // [2 * cap] each, by phase parity
    sssp_bits_t *sFd;      // distances of the frontier entries held in shared memory
    unsigned int *sCnt;    // [4]: |F| by parity, then |R| by parity
    sssp_bits_t *sThr;     // [4]: (out, min) by parity
    __device__ unsigned int nF(int phase) const { return ((volatile unsigned int *)sCnt)[phase & 1]; }
    __device__ unsigned int nR(int phase) const { return ((volatile unsigned int *)sCnt)[2 + (phase & 1)]; }
    __device__ int F(int phase, long long i) const {
        return i < cap ? sF[(phase & 1) * cap + i] : sssp_ldcg(qF + (long long)(phase & 1) * n + i);
    }
    __device__ sssp_d_t Fdist(int phase, long long i, int u) const {
        return i < cap ? sssp_val(sFd[(phase & 1) * cap + i]) : sssp_dist_of(key, u);
    }
    __device__ int R(int phase, long long i) const {
        return i < cap ? sR[(phase & 1) * cap + i] : sssp_ldcg(qR + (long long)(phase & 1) * n + i);
    }
    __device__ void pushF(int phase, int v, sssp_d_t d) {
        const unsigned int slot = atomicAdd(sCnt + (phase & 1), 1u);
        if (slot < (unsigned int)cap) {
            sF[(phase & 1) * cap + slot] = v;
            sFd[(phase & 1) * cap + slot] = sssp_bits(d);
        } else {
            qF[(long long)(phase & 1) * n + slot] = v;
        }
    }
    __device__ void pushR(int phase, int v) {
        const unsigned int slot = atomicAdd(sCnt + 2 + (phase & 1), 1u);
        if (slot < (unsigned int)cap) sR[(phase & 1) * cap + slot] = v;
        else qR[(long long)(phase & 1) * n + slot] = v;
    }
    __device__ sssp_bits_t thr_out(int phase) const { return ((volatile sssp_bits_t *)sThr)[2 * (phase & 1)]; }
    __device__ sssp_bits_t thr_min(int phase) const { return ((volatile sssp_bits_t *)sThr)[2 * (phase & 1) + 1]; }
    __device__ void fold(int phase, const SsspKeys &k) {
#if SSSP_OUT
        sssp_fold_min(sThr + 2 * (phase & 1), k.out);
#endif
#if SSSP_NEED_DMIN
        sssp_fold_min(sThr + 2 * (phase & 1) + 1, k.dmin);
#endif
    }
};

// ---- relax -----------------------------------------------------------------------------------
#ifndef SSSP_RELAX_BATCH
#define SSSP_RELAX_BATCH 4  // edges per lane whose round trips Crauser's push overlaps
#endif
#if SSSP_RELAX_BATCH < 1 || SSSP_RELAX_BATCH > 8
#error "SSSP_RELAX_BATCH must be in [1, 8]"
#endif

// The edges [first, end) of u with stride `stride`: `edge(t, w, u, du)` per edge (target, weight).
template <class Edge>
__device__ __forceinline__ void sssp_walk_edges(const int *__restrict__ indices, const sssp_w_t *__restrict__ weights,
                                                long long first, long long end, int stride, int u, sssp_d_t du,
                                                Edge &edge) {
    for (long long e = first; e < end; e += stride) edge(__ldg(indices + e), __ldg(weights + e), u, du);
}

// Lane groups of SSSP_RELAX_LANES threads walk the out-edges of `count` list entries; an entry
// with more than SSSP_BIG_DEGREE edges is stashed and walked by the whole block afterwards, so
// one hub does not serialise a lane group. In the group's lane 0, `node(i)` reads entry i's node
// v (its row bounds are loaded at once, beside the entry's own reads) and `entry(i, v, du)`
// decides: false skips it, true sets the distance bits du it pushes. The group's lanes then call
// `edges(first, end, stride, u, du)`, which walks the edges first, first + stride, ... < end of
// u and returns whether it stopped early (every edge of u after the last one it read needs no
// walk: a sorted row's edges above the relax bound).
// prefix (Crauser's bounded phases on sorted rows): a hub's group first walks its lightest
// SSSP_PREFIX_EDGES edges itself, and the hub is stashed for the rest only if some lane of the
// group was still below the bound at its last edge. Most hubs of a late dense phase end inside
// that prefix, so they cost their group one or two batches instead of a block-wide walk each (the
// stash walks its hubs one after another).
// Must be called by every thread of the block (it has block barriers).
#define SSSP_PREFIX_EDGES (2 * SSSP_RELAX_BATCH * SSSP_RELAX_LANES)
// The block's stash (one copy for every instantiation of the walk).
__shared__ int sssp_stash_u[SSSP_BIG_STASH];
__shared__ sssp_bits_t sssp_stash_d[SSSP_BIG_STASH];
__shared__ long long sssp_stash_e[SSSP_BIG_STASH];  // the first edge the block walks
__shared__ unsigned int sssp_stashed;
template <class Node, class Entry, class Edges>
__device__ void sssp_walk_rows(const long long *__restrict__ indptr, unsigned int count, long long tid,
                               long long nthreads, bool prefix, Node node, Entry entry, Edges edges) {
    int *const stash_u = sssp_stash_u;
    sssp_bits_t *const stash_d = sssp_stash_d;
    long long *const stash_e = sssp_stash_e;
    unsigned int &stashed = sssp_stashed;
    if (threadIdx.x == 0) stashed = 0;
    sssp_block_sync();
    const long long group = tid / SSSP_RELAX_LANES, ngroups = nthreads / SSSP_RELAX_LANES;
    const int lane = (int)(tid % SSSP_RELAX_LANES);
    // The group's lanes run in step (same i): lane 0 decides for all of them.
    const unsigned int mask = SSSP_RELAX_LANES == 32
        ? SSSP_FULL_MASK
        : (((1u << SSSP_RELAX_LANES) - 1u) << ((threadIdx.x & 31) & ~(SSSP_RELAX_LANES - 1)));
    for (long long i = group; i < count; i += ngroups) {
        int u = -1;
        sssp_bits_t dub = 0;
        long long beg = 0, end = 0;
        if (lane == 0) {
            const int v = node(i);
            beg = __ldg(indptr + v);
            end = __ldg(indptr + v + 1);
            if (entry(i, v, dub)) u = v;
        }
        u = __shfl_sync(mask, u, 0, SSSP_RELAX_LANES);
        if (u < 0) continue;
        dub = __shfl_sync(mask, dub, 0, SSSP_RELAX_LANES);
        beg = __shfl_sync(mask, beg, 0, SSSP_RELAX_LANES);
        end = __shfl_sync(mask, end, 0, SSSP_RELAX_LANES);
        if (end - beg > SSSP_BIG_DEGREE) {
            if (prefix) {
                const long long cut = beg + SSSP_PREFIX_EDGES;
                const bool stopped = edges(beg + lane, cut, SSSP_RELAX_LANES, u, dub);
                if (__all_sync(mask, stopped)) continue;
                beg = cut;
            }
            unsigned int s = 0;
            if (lane == 0) s = atomicAdd(&stashed, 1u);
            s = __shfl_sync(mask, s, 0, SSSP_RELAX_LANES);
            if (s < SSSP_BIG_STASH) {
                if (lane == 0) {
                    stash_u[s] = u;
                    stash_d[s] = dub;
                    stash_e[s] = beg;
                }
                continue;
            }
        }
        edges(beg + lane, end, SSSP_RELAX_LANES, u, dub);
    }
    sssp_block_sync();
    const unsigned int nbig = min(stashed, (unsigned int)SSSP_BIG_STASH);
    for (unsigned int s = 0; s < nbig; ++s) {
        const int u = stash_u[s];
        edges(stash_e[s] + threadIdx.x, __ldg(indptr + u + 1), (int)blockDim.x, u, stash_d[s]);
    }
}

// sssp_walk_rows with `edge(t, w, u, du)` called for every out-edge in turn (sssp_walk_edges).
// Used by near-far's grid steps.
template <class Node, class Entry, class Edge>
__device__ void sssp_walk(const long long *__restrict__ indptr, const int *__restrict__ indices,
                          const sssp_w_t *__restrict__ weights, unsigned int count, long long tid,
                          long long nthreads, Node node, Entry entry, Edge edge) {
    sssp_walk_rows(indptr, count, tid, nthreads, false, node, entry,
                          [&](long long first, long long end, int stride, int u, sssp_bits_t du) {
                              sssp_walk_edges(indices, weights, first, end, stride, u, sssp_val(du), edge);
                              return false;
                          });
}

#if !SSSP_PULL
// Crauser's push along u's edges [first, end) (stride: the lane group's size, or the block's for
// a stashed hub). An edge is a chain of dependent round trips: its weight and target, the
// target's key, the atomicMin, the fringe append. A lane takes SSSP_RELAX_BATCH edges at a time
// and issues each round for all of them before it waits on the first, so it pays the chain once
// per batch, not once per edge (dense phases were bound by that chain, not by bandwidth).
// A candidate k = (d(u) + w, u) goes on only if it is below the target's key as read:
//   - keys only fall, so a stale read can only be larger than the current key and this never
//     skips a needed update;
//   - a settled target's distance is final (and its key no longer changes during relax), so no
//     candidate's distance is below it: a candidate below the key is either a smaller distance,
//     and then the target is unsettled, or, with packed keys, an equal distance with a smaller
//     predecessor id. Only that tie needs the settled check, which the CPU rule needs (the
//     predecessor is settled in an earlier phase than its node); unpacked keys hold no
//     predecessor, so they never pass on a tie.
// Bounded (the relax bound at the top of this file): an edge with d(u) + w > ub is skipped before
// its target is read.
// Sorted (the rows ascend by weight, sssp_e_sort_rows): a lane's edges ascend too, so once one
// is above the bound every later one is, and the lane stops there; a dense graph's late phases
// then read the few light edges of each frontier node instead of all of its weights.
// Returns whether the lane stopped early (sorted and bounded: its later edges are all above).
template <bool Bounded, class Q>
__device__ __forceinline__ bool sssp_push_edges(SSSP_ARGS, Q &q, long long first, long long end, int stride, int u,
                                                sssp_d_t du, sssp_d_t ub, bool sorted, int phase, SsspKeys &keys) {
    constexpr int B = SSSP_RELAX_BATCH;
    bool more = true;
    for (long long e = first; more && e < end; e += (long long)B * stride) {
        sssp_w_t w[B];
        int v[B];
        bool go[B];
#pragma unroll
        for (int j = 0; j < B; ++j) {
            const long long f = e + (long long)j * stride;
            go[j] = f < end;
            w[j] = go[j] ? __ldg(weights + f) : (sssp_w_t)0;
            if constexpr (!Bounded) v[j] = go[j] ? __ldg(indices + f) : 0;
        }
        if constexpr (Bounded) {
#pragma unroll
            for (int j = 0; j < B; ++j) {
                const bool above = sssp_add(du, (sssp_d_t)w[j]) > ub;
                more = more && !(sorted && above);
                go[j] = go[j] && !above;
                v[j] = go[j] ? __ldg(indices + e + (long long)j * stride) : 0;
            }
        }
        sssp_key_t k[B], cur[B];
#pragma unroll
        for (int j = 0; j < B; ++j) {
            const sssp_d_t nd = sssp_add(du, (sssp_d_t)w[j]);
#if SSSP_PACKED
            k[j] = ((sssp_key_t)nd << 32) | (unsigned int)u;
#else
            k[j] = sssp_bits(nd);
#endif
            cur[j] = go[j] ? sssp_ldcg(key + v[j]) : (sssp_key_t)0;
        }
#pragma unroll
        for (int j = 0; j < B; ++j) go[j] = go[j] && k[j] < cur[j];
#if SSSP_PACKED
#pragma unroll
        for (int j = 0; j < B; ++j)
            if (go[j] && (cur[j] >> 32) == (k[j] >> 32)) go[j] = sssp_ldcg(settled_at + v[j]) == SSSP_UNSETTLED;
#endif
#pragma unroll
        for (int j = 0; j < B; ++j) cur[j] = go[j] ? atomicMin(key + v[j], k[j]) : (sssp_key_t)0;
#pragma unroll
        for (int j = 0; j < B; ++j) {
            if (!go[j]) continue;
            if (cur[j] == SSSP_KEY_INF) {  // reached for the first time
                q.pushR(phase, v[j]);
                sssp_count(ctrl + SSSP_CTRL_REACHED);
            }
            // v's thresholds from this candidate: a concurrent smaller one adds its own.
            sssp_keys_add(keys, sssp_key_dist(k[j]), omega, v[j]);
        }
    }
    return !more;
}

// Push: the frontier F_{p-1} walks its out-edges (sssp_walk_rows, sssp_push_edges), bounded by
// the slot settle p-1 wrote (the bound at the top of this file). Every thread reads the same slot,
// so all take the same branch, whose walk has block barriers.
template <class Q>
__device__ void sssp_relax_step(SSSP_ARGS, Q &q, int phase, long long tid, long long nthreads) {
    SsspKeys keys;
    sssp_keys_init(keys);
    unsigned long long *slots = sssp_bound_slots(ctrl);
    if (tid == 0) __stcg(slots + ((phase + 1) & 1), 0ull);  // settle p folds into it
    const sssp_bits_t ub_bits = (sssp_bits_t)sssp_ldcg(slots + (phase & 1));
    const bool bounded = ub_bits != SSSP_INF_BITS;
    const bool sorted = sssp_ldcg(ctrl + SSSP_CTRL_SORTED) != 0u;
    const sssp_d_t ub = sssp_val(ub_bits);
    auto node = [&](long long i) { return q.F(phase - 1, i); };
    auto bounded_entry = [&](long long i, int u, sssp_bits_t &du) {
        const sssp_d_t d = q.Fdist(phase - 1, i, u);
        du = sssp_bits(d);
#if SSSP_OUT
        return !(sssp_add(d, __ldg(omega + u)) > ub);  // every edge of u is above it
#else
        return true;
#endif
    };
    if (bounded) {
        sssp_walk_rows(indptr, q.nF(phase - 1), tid, nthreads, sorted, node, bounded_entry,
                       [&](long long first, long long end, int stride, int u, sssp_bits_t du) {
                           return sssp_push_edges<true>(SSSP_PASS, q, first, end, stride, u, sssp_val(du), ub, sorted,
                                                        phase, keys);
                       });
    } else {
        sssp_walk_rows(indptr, q.nF(phase - 1), tid, nthreads, false, node,
                              [&](long long i, int u, sssp_bits_t &du) {
                                  du = sssp_bits(q.Fdist(phase - 1, i, u));
                                  return true;
                              },
                              [&](long long first, long long end, int stride, int u, sssp_bits_t du) {
                                  return sssp_push_edges<false>(SSSP_PASS, q, first, end, stride, u, sssp_val(du), ub,
                                                                false, phase, keys);
                              });
    }
    q.fold(phase, keys);
}
#else
// Pull: every unsettled node scans its in-edges (indptr/indices/weights are the reverse graph)
// for predecessors settled in the previous phase. Only v's own lanes write key[v]: no atomics.
template <class Q>
__device__ void sssp_relax_step(SSSP_ARGS, Q &q, int phase, long long tid, long long nthreads) {
    SsspKeys keys;
    sssp_keys_init(keys);
    const int lane = (int)(tid % SSSP_RELAX_LANES);
    const long long ngroups = nthreads / SSSP_RELAX_LANES;
    const long long rounds = (n + ngroups - 1) / ngroups;  // equal trip counts: lanes stay converged
    for (long long r = 0; r < rounds; ++r) {
        const long long v = r * ngroups + tid / SSSP_RELAX_LANES;
        sssp_key_t best = SSSP_KEY_INF;
        if (v < n && sssp_ldcg(settled_at + v) == SSSP_UNSETTLED) {
            const long long end = __ldg(indptr + v + 1);
            for (long long e = __ldg(indptr + v) + lane; e < end; e += SSSP_RELAX_LANES) {
                const int u = __ldg(indices + e);
                if (sssp_ldcg(settled_at + u) != phase - 1) continue;
                const sssp_d_t nd = sssp_add(sssp_dist_of(key, u), (sssp_d_t)__ldg(weights + e));
#if SSSP_PACKED
                const sssp_key_t k = ((sssp_key_t)nd << 32) | (unsigned int)u;
#else
                const sssp_key_t k = sssp_bits(nd);
#endif
                best = best < k ? best : k;
            }
        }
#pragma unroll
        for (int off = SSSP_RELAX_LANES / 2; off > 0; off >>= 1) {
            const sssp_key_t o = __shfl_xor_sync(SSSP_FULL_MASK, best, off);
            best = best < o ? best : o;
        }
        if (lane == 0 && v < n && best != SSSP_KEY_INF) {
            const sssp_key_t old = sssp_ldcg(key + v);
            if (best < old) {
                __stcg(key + v, best);
                if (old == SSSP_KEY_INF) q.pushR(phase, (int)v);
                sssp_keys_add(keys, sssp_key_dist(best), omega, (int)v);
            }
        }
    }
    q.fold(phase, keys);
}
#endif

// ---- settle ----------------------------------------------------------------------------------
template <class Q>
__device__ void sssp_settle_step(SSSP_ARGS, Q &q, int phase, long long tid, long long nthreads) {
    const unsigned int nr = q.nR(phase);
#if SSSP_OUT
    const sssp_bits_t t_out_bits = q.thr_out(phase);
    const sssp_d_t t_out = sssp_val(t_out_bits);
    const bool t_out_finite = t_out_bits != SSSP_INF_BITS;
#endif
#if SSSP_NEED_DMIN
    const sssp_d_t t_min = sssp_val(q.thr_min(phase));
#endif
    SsspKeys keys;
    sssp_keys_init(keys);
    sssp_bits_t carried = 0;  // the largest distance carried into R_{p+1} (the relax bound)
    for (long long i = tid; i < nr; i += nthreads) {
        const int v = q.R(phase, i);
        const sssp_d_t d = sssp_dist_of(key, v);
        bool settle = false;
#if SSSP_OUT
        // An infinite OUT threshold (only sinks left) settles nothing by this rule: as in the
        // paper's loop, the solve ends there and those sinks keep their final distances.
        settle = t_out_finite && d <= t_out;
#endif
#if SSSP_IN
        settle = settle || d <= sssp_add(t_min, __ldg(iota + v));
#elif !SSSP_OUT
        settle = d <= t_min;  // Martín: nothing is below the minimum, so this is d == min
#endif
        if (settle) {
            __stcg(settled_at + v, phase);
            q.pushF(phase, v, d);
        } else {
            q.pushR(phase + 1, v);
            sssp_keys_add(keys, d, omega, v);
            carried = carried > sssp_bits(d) ? carried : sssp_bits(d);
        }
    }
    q.fold(phase + 1, keys);
    // The relax bound of phase p + 1. Nothing reaches a node during settle, so every thread reads
    // the same count and the warp-wide fold below is taken by all lanes or none.
    unsigned long long *slot = sssp_bound_slots(ctrl) + ((phase + 1) & 1);
    if (sssp_ldcg(ctrl + SSSP_CTRL_REACHED) == (unsigned int)n) sssp_fold_max(slot, carried);
    else if (tid == 0) atomicMax(slot, (unsigned long long)SSSP_INF_BITS);
}

// ---- kernels of the host and graph loops ------------------------------------------------------
__device__ __forceinline__ int sssp_phase(const unsigned int *ctrl) { return (int)sssp_ldcg(ctrl + SSSP_CTRL_PHASE); }
__device__ __forceinline__ SsspGridQ sssp_grid_q(SSSP_ARGS) { return SsspGridQ{qF, qR, cnt, thr, key, n}; }

extern "C" __global__ void sssp_e_init(SSSP_ARGS, int source) {
    // Node arrays and the per-phase history; ctrl is cleared by the host.
    const long long stride = (long long)gridDim.x * blockDim.x;
    const long long hist = 2 * ((long long)n + 3);
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < hist; i += stride) {
        if (i < n) {
            const bool s = i == source;
            settled_at[i] = s ? 0 : SSSP_UNSETTLED;
#if SSSP_PACKED
            key[i] = s ? (sssp_key_t)SSSP_NO_PRED : SSSP_KEY_INF;
#else
            key[i] = s ? (sssp_key_t)0 : SSSP_KEY_INF;
            pred[i] = (int)SSSP_NO_PRED;
#endif
        }
        cnt[i] = i == 0 ? 1u : 0u;  // F_0 = {source}
        thr[i] = SSSP_INF_BITS;
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        qF[0] = source;
        ctrl[SSSP_CTRL_REACHED] = 1;  // the source
        // No bound until settle has seen every node reached (n == 1: nothing is left to relax).
        sssp_bound_slots(ctrl)[0] = SSSP_INF_BITS;
        sssp_bound_slots(ctrl)[1] = SSSP_INF_BITS;
    }
}

extern "C" __global__ void sssp_e_relax(SSSP_ARGS) {
    if (sssp_ldcg(ctrl + SSSP_CTRL_DONE)) return;  // done: the host polls only every few phases
    SsspGridQ q = sssp_grid_q(SSSP_PASS);
    sssp_relax_step(SSSP_PASS, q, sssp_phase(ctrl), (long long)blockIdx.x * blockDim.x + threadIdx.x,
                    (long long)gridDim.x * blockDim.x);
}

// The last block to finish advances the phase (or marks the solve done) on the device and, in
// the graph loop, sets the WHILE node's condition.
extern "C" __global__ void sssp_e_settle(SSSP_ARGS, unsigned long long cond) {
    if (sssp_ldcg(ctrl + SSSP_CTRL_DONE)) return;
    const int phase = sssp_phase(ctrl);
    SsspGridQ q = sssp_grid_q(SSSP_PASS);
    sssp_settle_step(SSSP_PASS, q, phase, (long long)blockIdx.x * blockDim.x + threadIdx.x,
                     (long long)gridDim.x * blockDim.x);
    __shared__ bool last;
    sssp_block_sync();
    if (threadIdx.x == 0) {
        __threadfence();
        last = atomicAdd(ctrl + SSSP_CTRL_FINISHED, 1u) == gridDim.x - 1;
    }
    sssp_block_sync();
    if (last && threadIdx.x == 0) {
        __threadfence();
        ctrl[SSSP_CTRL_FINISHED] = 0;
        const bool done = sssp_ldcg(cnt + 2 * (long long)phase) == 0 || phase + 1 >= (int)ctrl[SSSP_CTRL_LIMIT];
        if (done) ctrl[SSSP_CTRL_DONE] = 1;
        else ctrl[SSSP_CTRL_PHASE] = phase + 1;
        if (cond) cudaGraphSetConditional((cudaGraphConditionalHandle)cond, done ? 0u : 1u);
        __threadfence();
    }
}

// ---- the persistent loop ----------------------------------------------------------------------
// Software grid barrier: the host launches at most as many blocks as can be resident at once.
// ctrl[2..3] count arrivals (64-bit) and are never reset during a solve: a block that arrives as
// the a-th waits until the count reaches the next multiple of the grid size. One atomic and one
// poll per block, where a counter reset by the last arrival and a generation word cost that block
// two more round trips and every other block the wait for them. A barrier that waits far too long
// (a grid that was not resident) aborts the solve instead of hanging: ctrl[5] is set and every
// block leaves.
__device__ __forceinline__ bool sssp_grid_sync(unsigned int *ctrl) {
    __shared__ bool abort_;
    sssp_block_sync();
    if (threadIdx.x == 0) {
        bool failed = false;
        __threadfence();
        unsigned long long *count = reinterpret_cast<unsigned long long *>(ctrl + SSSP_CTRL_BARRIER);
        const unsigned long long arrived = atomicAdd(count, 1ull) + 1ull;
        const unsigned long long target = arrived + (gridDim.x - 1u - (arrived - 1u) % gridDim.x);
        if (arrived != target) {
            long long spins = 0;
            while (*(volatile unsigned long long *)count < target) {
                if (((volatile unsigned int *)ctrl)[SSSP_CTRL_ABORT]) {
                    failed = true;
                    break;
                }
                if (++spins > (1ll << 26)) {  // seconds, far beyond any phase
                    atomicExch(ctrl + SSSP_CTRL_ABORT, 1u);
                    failed = true;
                    break;
                }
                __nanosleep(20);
            }
        }
        __threadfence();
        // No second read of the abort flag (a round trip per barrier): a block that timed out
        // has left, so the others time out at the next barrier and see the flag in their spin.
        abort_ = failed;
    }
    sssp_block_sync();
    return !abort_;
}

// Work estimate of a phase: the previous phase's frontier edges (frontier size times the mean
// degree) plus its fringe.
__device__ __forceinline__ unsigned long long sssp_work(unsigned int nf, unsigned int nr, int degree) {
    return (unsigned long long)nf * (unsigned int)degree + nr;
}

// Kept out of line on purpose: inlined into sssp_e_persistent, nvcc wrapped this whole loop in
// one divergence region and left a block barrier to be reached by a split warp (synccheck:
// "Divergent thread(s) in warp"); the block then lost fringe entries and settled nodes early,
// on the H200 with 1 or 2 relax lanes. A call reconverges the warp on entry and return.
// Phases of block 0 alone, from `phase` on, while their work estimate (sssp_work) stays at most
// local_limit. Loads the queues' heads into shared memory,
// runs the phases with block barriers only, and stores the state back for the grid. Returns the
// next phase to run; *done says whether the solve ended.
__device__ __noinline__ int sssp_local_phases(SSSP_ARGS, int phase, int local_limit, int cap, int degree, int limit,
                                 bool *done) {
    extern __shared__ unsigned char sssp_dyn[];
    __shared__ unsigned int s_cnt[4];
    __shared__ sssp_bits_t s_thr[4];
    SsspLocalQ q;
    q.qF = qF; q.qR = qR; q.key = key; q.n = n; q.cap = cap;
    q.sFd = reinterpret_cast<sssp_bits_t *>(sssp_dyn);
    q.sF = reinterpret_cast<int *>(q.sFd + 2 * cap);
    q.sR = q.sF + 2 * cap;
    q.sCnt = s_cnt;
    q.sThr = s_thr;
    const int pf = (phase - 1) & 1, pr = phase & 1;
    const unsigned int nf = sssp_ldcg(cnt + 2 * (long long)(phase - 1));
    const unsigned int nr = sssp_ldcg(cnt + 2 * (long long)phase + 1);
    if (threadIdx.x == 0) {
        s_cnt[pf] = nf;
        s_cnt[2 + pr] = nr;
        s_thr[2 * pr] = sssp_ldcg(thr + 2 * (long long)phase);
        s_thr[2 * pr + 1] = sssp_ldcg(thr + 2 * (long long)phase + 1);
    }
    for (unsigned int i = threadIdx.x; i < min(nf, (unsigned int)cap); i += blockDim.x) {
        const int u = sssp_ldcg(qF + (long long)pf * n + i);
        q.sF[pf * cap + i] = u;
        q.sFd[pf * cap + i] = sssp_bits(sssp_dist_of(key, u));
    }
    for (unsigned int i = threadIdx.x; i < min(nr, (unsigned int)cap); i += blockDim.x)
        q.sR[pr * cap + i] = sssp_ldcg(qR + (long long)pr * n + i);
    *done = false;
    for (;;) {
        sssp_block_sync();  // every thread has read the counters the clearing below overwrites
        if (threadIdx.x == 0) {  // clear what this phase's settle writes (held phase - 2's)
            s_cnt[phase & 1] = 0;
            s_cnt[2 + ((phase + 1) & 1)] = 0;
            s_thr[2 * ((phase + 1) & 1)] = SSSP_INF_BITS;
            s_thr[2 * ((phase + 1) & 1) + 1] = SSSP_INF_BITS;
        }
        sssp_relax_step(SSSP_PASS, q, phase, threadIdx.x, blockDim.x);  // starts with a barrier
        sssp_block_sync();
        sssp_settle_step(SSSP_PASS, q, phase, threadIdx.x, blockDim.x);
        sssp_block_sync();
        const unsigned int settled = q.nF(phase);
        if (threadIdx.x == 0) {  // the per-phase history (statistics, and the grid's estimate)
            cnt[2 * (long long)phase] = settled;
            cnt[2 * (long long)phase + 1] = q.nR(phase);
        }
        if (settled == 0 || phase + 1 >= limit) {
            *done = true;
            return phase;
        }
        ++phase;
        if (sssp_work(q.nF(phase - 1), q.nR(phase - 1), degree) > (unsigned long long)local_limit) break;
    }
    // Hand phase `phase` to the grid: F_{phase-1}, R_phase (carried so far) and its thresholds.
    const int qf = (phase - 1) & 1, qr = phase & 1;
    const unsigned int mf = q.nF(phase - 1), mr = q.nR(phase);
    for (unsigned int i = threadIdx.x; i < min(mf, (unsigned int)cap); i += blockDim.x)
        __stcg(qF + (long long)qf * n + i, q.sF[qf * cap + i]);
    for (unsigned int i = threadIdx.x; i < min(mr, (unsigned int)cap); i += blockDim.x)
        __stcg(qR + (long long)qr * n + i, q.sR[qr * cap + i]);
    if (threadIdx.x == 0) {
        cnt[2 * (long long)(phase - 1)] = mf;
        cnt[2 * (long long)phase + 1] = mr;
        thr[2 * (long long)phase] = q.thr_out(phase);
        thr[2 * (long long)phase + 1] = q.thr_min(phase);
    }
    return phase;
}

// local_limit: a phase whose work estimate (sssp_work) is at most this runs in block 0 alone; 0
// disables the block-local mode. local_cap: queue entries held in shared memory in that mode (the
// dynamic shared memory is 2 * local_cap * (8 + distance bytes)). degree: the graph's mean
// out-degree, rounded up.
extern "C" __global__ void __launch_bounds__(1024, 1)
    sssp_e_persistent(SSSP_ARGS, int local_limit, int local_cap, int degree) {
    const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long nthreads = (long long)gridDim.x * blockDim.x;
    const int limit = (int)ctrl[SSSP_CTRL_LIMIT];
    SsspGridQ q = sssp_grid_q(SSSP_PASS);
    int phase = 1;
    for (;;) {
        const unsigned long long work = sssp_work(q.nF(phase - 1), q.nR(phase - 1), degree);
        if (local_limit > 0 && work <= (unsigned long long)local_limit) {
            if (blockIdx.x == 0) {
                bool done;
                phase = sssp_local_phases(SSSP_PASS, phase, local_limit, local_cap, degree, limit, &done);
                if (threadIdx.x == 0) {
                    __stcg(ctrl + SSSP_CTRL_PHASE, (unsigned int)phase);
                    __stcg(ctrl + SSSP_CTRL_DONE, done ? 1u : 0u);
                }
            }
            if (!sssp_grid_sync(ctrl)) return;
            phase = (int)sssp_ldcg(ctrl + SSSP_CTRL_PHASE);
            if (sssp_ldcg(ctrl + SSSP_CTRL_DONE)) return;
            continue;
        }
        sssp_relax_step(SSSP_PASS, q, phase, tid, nthreads);
        if (!sssp_grid_sync(ctrl)) return;
        sssp_settle_step(SSSP_PASS, q, phase, tid, nthreads);
        if (!sssp_grid_sync(ctrl)) return;
        if (q.nF(phase) == 0 || phase + 1 >= limit) {
            if (tid == 0) {
                ctrl[SSSP_CTRL_PHASE] = (unsigned int)phase;
                ctrl[SSSP_CTRL_DONE] = 1;
            }
            return;
        }
        ++phase;
    }
}

// ---- rows sorted by weight (the relax bound's early exit) --------------------------------------
// Run once when the graph is uploaded (Crauser, successors, 32-bit weights, no row longer than
// SSSP_SORT_CAP: the host checks, and then sets ctrl[SSSP_CTRL_SORTED] for every solve). A block
// sorts one row at a time in shared memory by (weight, target), a bitonic sort over the row
// padded to a power of two. The order of a row's edges changes no distance and no predecessor
// (the tie rule names the smallest predecessor id, never an edge), and non-negative float32
// weights order like their bits (-0.0 aside, which becomes +0.0).
#define SSSP_SORT_CAP 4096
// A weight of -0.0 is non-negative but its bits sort last: it is stored as +0.0 (the same value).
#if SSSP_FLOAT
#define SSSP_SORT_WEIGHT_MASK 0x7FFFFFFFu
#else
#define SSSP_SORT_WEIGHT_MASK 0xFFFFFFFFu
#endif
extern "C" __global__ void sssp_e_sort_rows(const long long *__restrict__ indptr, int *indices, sssp_w_t *weights,
                                            int n) {
#if SSSP_WEIGHT_BITS == 32
    __shared__ unsigned long long row[SSSP_SORT_CAP];
    unsigned int *wbits = reinterpret_cast<unsigned int *>(weights);
    for (long long r = blockIdx.x; r < n; r += gridDim.x) {
        const long long beg = indptr[r];
        const int deg = (int)(indptr[r + 1] - beg);
        if (deg < 2 || deg > SSSP_SORT_CAP) continue;  // the same for the whole block
        int size = 2;
        while (size < deg) size <<= 1;
        for (int i = threadIdx.x; i < size; i += blockDim.x)
            row[i] = i < deg ? ((unsigned long long)(wbits[beg + i] & SSSP_SORT_WEIGHT_MASK) << 32) |
                                   (unsigned int)indices[beg + i]
                             : ~0ull;
        __syncthreads();
        for (int k = 2; k <= size; k <<= 1) {
            for (int j = k >> 1; j > 0; j >>= 1) {
                for (int i = threadIdx.x; i < size; i += blockDim.x) {
                    const int o = i ^ j;
                    if (o > i) {
                        const unsigned long long a = row[i], b = row[o];
                        if (((i & k) == 0) == (a > b)) {
                            row[i] = b;
                            row[o] = a;
                        }
                    }
                }
                __syncthreads();
            }
        }
        for (int i = threadIdx.x; i < deg; i += blockDim.x) {
            wbits[beg + i] = (unsigned int)(row[i] >> 32);
            indices[beg + i] = (int)(unsigned int)row[i];
        }
        __syncthreads();
    }
#endif
}

// ---- predecessor tree for unpacked distances ---------------------------------------------------
// pred[v] = the smallest u settled in an earlier phase than v with d(u) + w(u, v) == d(v); pred
// starts at SSSP_NO_PRED (as unsigned: the largest value, so atomicMin on the bits works).
#if !SSSP_PULL
extern "C" __global__ void sssp_e_tree(SSSP_ARGS) {
    const long long gtid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long u = gtid / SSSP_RELAX_LANES;
    const int lane = (int)(gtid % SSSP_RELAX_LANES);
    if (u >= n) return;
    const int su = settled_at[u];
    if (su == SSSP_UNSETTLED) return;
    const sssp_d_t du = sssp_key_dist(key[u]);
    const long long end = indptr[u + 1];
    for (long long e = indptr[u] + lane; e < end; e += SSSP_RELAX_LANES) {
        const int v = indices[e];
        if (su < settled_at[v] && sssp_add(du, (sssp_d_t)weights[e]) == sssp_key_dist(key[v]))
            atomicMin((unsigned int *)pred + v, (unsigned int)u);
    }
}
#else
extern "C" __global__ void sssp_e_tree(SSSP_ARGS) {
    const long long gtid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long v = gtid / SSSP_RELAX_LANES;
    const int lane = (int)(gtid % SSSP_RELAX_LANES);
    unsigned int best = SSSP_NO_PRED;
    if (v < n && settled_at[v] != SSSP_UNSETTLED) {
        const int sv = settled_at[v];
        const sssp_d_t dv = sssp_key_dist(key[v]);
        const long long end = indptr[v + 1];
        for (long long e = indptr[v] + lane; e < end; e += SSSP_RELAX_LANES) {
            const int u = indices[e];
            if (settled_at[u] < sv && sssp_add(sssp_key_dist(key[u]), (sssp_d_t)weights[e]) == dv)
                best = min(best, (unsigned int)u);
        }
    }
#pragma unroll
    for (int off = SSSP_RELAX_LANES / 2; off > 0; off >>= 1) best = min(best, __shfl_xor_sync(SSSP_FULL_MASK, best, off));
    if (lane == 0 && v < n) pred[v] = (int)best;
}
#endif

