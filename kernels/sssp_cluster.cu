// ---- near-far in one thread-block cluster (Hopper and later) -----------------------------------
// The grid solver's step is a chain of L2 round trips plus a grid barrier (kernels/README.md, "Where
// a near-far step's time goes"): 5-9 µs a step, paid hundreds to thousands of times on meshes and
// road graphs. When the graph's distances fit in the shared memory of one thread-block cluster
// (SSSP_NF_CLUSTER blocks, one per multiprocessor), this solver keeps them there instead:
//   node v lives in block v % C at slot v / C (or where a placement puts it): its distance (32
//   bits) and two "active" bits (one per step parity); a block reaches another block's slots
//   through distributed shared memory,
//   so the distance atomicMin of an edge is a shared-memory atomic, and the step barrier is the
//   cluster's hardware barrier.
// A step p (Δ-stepping, label correcting, as sssp_nearfar.cu):
//   scan     every block reads its active bits of parity p: a node with d < T joins the block's
//            list (at most `cap`; the rest stay active), every other one stays active for p + 1;
//            one shared atomic per warp and round hands out the entries and their edge offsets
//            (the degrees are in shared memory);
//   walk     the list's out-edges, spread evenly over the block's threads (a binary search over
//            the entries' first edges per edge, so a hub costs its edges / blockDim rounds);
//            a target whose distance falls gets its active bit of parity p + 1 in its owner;
//   local    (fused: lq > 0, nodes placed in bands of a bandwidth-reducing order) a target of the
//            block's own band that falls below T is queued and relaxed in this step by whichever
//            warp pops it, without block barriers, until the band has nothing left below T:
//            one step carries the wave across the band (GAP's bucket fusion, per block);
//   decide   each block folds the smallest distance it left active (carried or lowered) into its
//            slot; after the cluster barrier every block reads all slots and makes the same choice:
//            nothing active ends the solve; a minimum at or above T raises T to the next multiple
//            of Δ above it (a new bucket).
// Any order of relaxations gives exact distances (a lowered node is always walked again with its
// new distance); T only orders the work. The distances are written to `key` (packed, predecessor
// NO_PRED) at the end, and sssp_nf_tree builds the predecessors as for the grid solver.
//
// Shared memory per block (dynamic, sized by the host: kernels.cluster_smem_bytes): the block's
// edges when resident, per-step words and an inbox, nb distances, two bit maps of nb bits, the
// rows when resident (else 16-bit degrees), the list (node, distance, row start, first edge;
// cap entries), and when fused a third bit map (queued) and the local queue (lq entries of 8 B,
// after the list sizes).
// Weights below 2^31 when resident (they are kept as int beside the target).
// 32-bit distances and fewer than 2^31 edges (row starts are 32-bit here).
#ifndef SSSP_NF_CLUSTER
#define SSSP_NF_CLUSTER 0
#endif
#if SSSP_NF_CLUSTER
#if !SSSP_PACKED
#error "the cluster solver keeps 32-bit integer distances"
#endif
#if SSSP_NF_CLUSTER != 1 && SSSP_NF_CLUSTER != 2 && SSSP_NF_CLUSTER != 4 && SSSP_NF_CLUSTER != 8 && \
    SSSP_NF_CLUSTER != 16
#error "SSSP_NF_CLUSTER must be 1, 2, 4, 8 or 16"
#endif
#define SSSP_NFC_LOG2 ((SSSP_NF_CLUSTER > 1) + (SSSP_NF_CLUSTER > 2) + (SSSP_NF_CLUSTER > 4) + (SSSP_NF_CLUSTER > 8))
#define SSSP_NFC_MASK (SSSP_NF_CLUSTER - 1)
#define SSSP_NFC_SPIN_NS 0
#ifndef SSSP_NF_MANY
#define SSSP_NF_MANY 0
#endif
#if SSSP_NF_MANY && SSSP_NF_TRACE
#error "the batch build of the cluster solver keeps no trace"
#endif


// Exclusive block scan of x (every thread calls it); `total` gets the block's sum. Ends with a
// block barrier, so ws is free again on return.
__device__ __forceinline__ unsigned int sssp_nfc_scan(unsigned int x, unsigned int *ws, unsigned int &total) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = (blockDim.x + 31) >> 5;
    unsigned int incl = x;
#pragma unroll
    for (int off = 1; off < 32; off <<= 1) {
        const unsigned int y = __shfl_up_sync(SSSP_FULL_MASK, incl, off);
        if (lane >= off) incl += y;
    }
    if (lane == 31) ws[warp] = incl;
    __syncthreads();
    if (warp == 0) {
        unsigned int w = lane < nwarps ? ws[lane] : 0u;
#pragma unroll
        for (int off = 1; off < 32; off <<= 1) {
            const unsigned int y = __shfl_up_sync(SSSP_FULL_MASK, w, off);
            if (lane >= off) w += y;
        }
        ws[lane] = w;
    }
    __syncthreads();
    total = ws[nwarps - 1];
    const unsigned int excl = incl - x + (warp ? ws[warp - 1] : 0u);
    __syncthreads();
    return excl;
}

#if SSSP_NF_TRACE
#define SSSP_NFC_MARK(p, slot, value)                                                               \
    if (rank == 0 && threadIdx.x == 0 && (p) < SSSP_NF_TRACE_MOVES) sssp_nf_trace[8 * (p) + (slot)] = (value);
#else
#define SSSP_NFC_MARK(p, slot, value)
#endif

// A node's slot, encoded as owner << 16 | loc: from the placement when there is one, else v % C.
__device__ __forceinline__ unsigned int sssp_nfc_place(const int *place, int v) {
    return place ? (unsigned int)__ldg(place + v)
                 : ((unsigned int)(v & SSSP_NFC_MASK) << 16) | (unsigned int)(v >> SSSP_NFC_LOG2);
}

// The node in slot loc of block rank (>= n or negative: an empty slot).
__device__ __forceinline__ int sssp_nfc_node(const int *slots, int nb, unsigned int rank, int loc) {
    return slots ? __ldg(slots + (long long)rank * nb + loc) : ((loc << SSSP_NFC_LOG2) | (int)rank);
}

// The out-degree of the node in slot loc (from shared memory: its rows when resident, else its
// 16-bit degree, 0xFFFF: read the row).
__device__ __forceinline__ unsigned int sssp_nfc_degree(bool resident, const unsigned int *lrow,
                                                        const unsigned short *ldeg, const long long *indptr,
                                                        const int *slots, int nb, unsigned int rank, int loc) {
    if (resident) return lrow[loc + 1] - lrow[loc];
    const unsigned int d = ldeg[loc];
    if (d != 0xFFFFu) return d;
    const int v = sssp_nfc_node(slots, nb, rank, loc);
    return (unsigned int)(__ldg(indptr + v + 1) - __ldg(indptr + v));
}

// delta_bits: Δ (sssp_nf_delta); nb: slots per block (a multiple of 32, nb * C >= n, at most
// 65536); cap: list entries per block; limit: the step guard (kernels.nearfar_step_limit); mb: 0,
// or the most edges of one block's nodes, when every block also keeps its nodes' rows and edges
// in shared memory (copied at the start; the steps then read no global memory). Otherwise every
// block keeps its nodes' out-degrees (16 bits; 0xFFFF: look it up) and reads rows and edges from
// global memory.
// lq: 0, or the capacity of the local queue: a target of this block whose distance falls below T
// is then relaxed within the step (local work: every warp pops queued nodes and relaxes their
// edges, a lane per edge, with no block barrier between pops) and the block meets the cluster
// only when none is left; a target in another block waits for the next step as before.
// spread (with lq > 0): a target in another block that falls below T joins *this* block's queue
// too, and the warp that pops it reads its row and edges from the owner's shared memory: a chain
// of relaxations stays with the block it started in, so a block's queue holds only its own
// warps' pushes and the block is done when its own count is (no count or flag crosses blocks),
// and the cluster barrier comes once per bucket, not once per step.
// Queue entries are nd << 32 | owner << 16 | slot (all ones: not yet written). A node of this
// block is queued once (its queued bit; nd all ones): its pop clears the bit, then reads the
// distance. Another block's node carries the distance it was pushed at (its bit would cost
// round trips to the owner): lowered again before its pop, it is pushed again, and the pop of
// the older entry finds a smaller distance and skips (the newer entry relaxes it).
// place/slots: null (node v in block v % C at slot v / C), or a placement: place[v] = owner << 16
// | slot, slots[owner * nb + slot] = v (-1 for an empty slot). With a placement that keeps
// neighbours together (kernels.cluster_placement) most edges stay in their block, so the local
// work carries a step's wave through the block's band without a cluster barrier (the bucket
// fusion of the GAP suite's Δ-stepping, per block).
// Writes key (every node), ctrl[0] steps + 1, ctrl[1] done (0: the step limit was reached),
// ctrl[4] raises, ctrl[5] 0, cnt[6] the largest list (entries, all blocks), cnt[7] the nodes
// popped by local work (all blocks and steps), cnt[8..9] the list entries summed (64-bit).
// Per-step words go by step parity: step p uses set p & 1 and clears set (p + 1) & 1, whose last
// use was before the cluster barrier that ended step p - 1. Each block sends its (minimum left
// active, list size, local pops) to every block's inbox before the barrier (remote stores, no
// round trip), so after it every block decides from its own shared memory.
// With SSSP_NF_TRACE, block 0's thread 0 stamps clock64() per step into sssp_nf_trace: [0] the
// top, [1] the list ready, [6] its rows ready, [2] the walk and local work done, [3] past the
// cluster barrier, [4] list size, [5] its edges, [7] its local pops.
#if SSSP_NF_MANY
// The batch build (SSSP_NF_MANY): every cluster of the grid solves source after source of
// `sources` (k of them, taken in turn from a counter: info[k * SSSP_RES_WORDS], zero at the
// launch), with its graph state set up once, and writes row `job` of `rows` in the caller's dtype
// (out_kind, as the result pass) and row `job` of `info` (SSSP_RES_WORDS words, zero at the
// launch: the control words, the counters and the reached nodes; no predecessors). Clusters
// never wait for one another, so the grid may hold more clusters than are resident at once.
extern "C" __global__ void __cluster_dims__(SSSP_NF_CLUSTER, 1, 1) __launch_bounds__(1024, 1)
    sssp_nfc_many(SSSP_ARGS, unsigned long long delta_bits, const int *sources, int nb, int cap, int limit, int mb,
                  int lq, int spread, const int *place, const int *slots, int k, void *rows, unsigned int *info,
                  int out_kind) {
#else
extern "C" __global__ void __cluster_dims__(SSSP_NF_CLUSTER, 1, 1) __launch_bounds__(1024, 1)
    sssp_nfc_solve(SSSP_ARGS, unsigned long long delta_bits, int source, int nb, int cap, int limit, int mb, int lq,
                   int spread, const int *place, const int *slots) {
#endif
    cg::cluster_group cluster = cg::this_cluster();
    const unsigned int rank = cluster.block_rank();
    extern __shared__ int2 sssp_nfc_smem[];
    const int nw = nb >> 5;
    const bool resident = mb > 0;
    int2 *ledge = sssp_nfc_smem;  // resident: (target's slot, weight) of this block's nodes' edges
    // [0..1] list entries << 32 | edges, by step parity
    unsigned long long *alloc = reinterpret_cast<unsigned long long *>(ledge + mb);
    unsigned long long *lqueue = alloc + 2;  // local work: lq entries (above), all ones until written
    // [0..1] minimum left, [2] capped edges, [4..6] local queue (head, tail, pending)
    unsigned int *words = reinterpret_cast<unsigned int *>(lqueue + lq);
    unsigned int *inbox = words + 8;  // [parity][block][3]: every block's (minimum, entries, local pops)
    unsigned int *dist = inbox + 2 * 3 * SSSP_NF_CLUSTER;
    unsigned int *bits = dist + nb;        // parity 0: [0, nw), parity 1: [nw, 2 nw)
    unsigned int *lrow = bits + 2 * nw;    // resident: first edge in ledge of each slot (nb + 1)
    const unsigned short *ldeg = reinterpret_cast<const unsigned short *>(lrow);  // otherwise: degrees
    int *l_node = reinterpret_cast<int *>(lrow + (resident ? nb + 1 : nb / 2));
    unsigned int *l_dist = reinterpret_cast<unsigned int *>(l_node + cap);
    int *l_start = reinterpret_cast<int *>(l_dist + cap);
    unsigned int *l_pre = reinterpret_cast<unsigned int *>(l_start + cap);  // first edge in the list
    unsigned int *lbits = l_pre + cap;  // local work: this block's nodes queued (nw words)
    unsigned int *qhead = words + 4, *qtail = words + 5, *qpend = words + 6;  // popped, pushed, pending
    __shared__ unsigned int ws[32];

    const sssp_d_t delta = sssp_nf_delta(delta_bits);
#if SSSP_NF_MANY
    __shared__ unsigned int s_job;
    unsigned int *next = info + (long long)k * SSSP_RES_WORDS;
    bool set_up = false;
    for (;;) {
        // Rank 0 takes the next job and tells every block of the cluster (the last remote
        // access of the previous job was before the barrier that ended it).
        if (rank == 0 && threadIdx.x == 0) {
            const unsigned int job = atomicAdd(next, 1u);
            for (int b = 0; b < SSSP_NF_CLUSTER; ++b) *cluster.map_shared_rank(&s_job, b) = job;
        }
        cluster.sync();
        const unsigned int job = s_job;
        if (job >= (unsigned int)k) break;
        const int source = __ldg(sources + job);
#endif
    for (int i = threadIdx.x; i < nb; i += blockDim.x) dist[i] = SSSP_INF_BITS;
    for (int i = threadIdx.x; i < 2 * nw; i += blockDim.x) bits[i] = 0u;
    for (int i = threadIdx.x; i < lq; i += blockDim.x) lqueue[i] = ~0ull;
    if (lq)
        for (int i = threadIdx.x; i < nw; i += blockDim.x) lbits[i] = 0u;
    if (threadIdx.x < 8) words[threadIdx.x] = threadIdx.x < 2 ? SSSP_INF_BITS : 0u;
    if (threadIdx.x < 2) alloc[threadIdx.x] = 0ull;
#if SSSP_NF_MANY
    if (!set_up) {  // the graph's part of the state is the same for every source
#endif
    if (resident) {  // this block's rows, then its edges (spread over the threads as in the walk)
        unsigned int run = 0;
        for (int base = 0; base < nb; base += blockDim.x) {
            const int loc = base + threadIdx.x;
            const int v = loc < nb ? sssp_nfc_node(slots, nb, rank, loc) : -1;
            const unsigned int deg =
                v >= 0 && v < n ? (unsigned int)(__ldg(indptr + v + 1) - __ldg(indptr + v)) : 0u;
            unsigned int total;
            const unsigned int e0 = sssp_nfc_scan(deg, ws, total);
            if (loc < nb) lrow[loc] = run + e0;
            run += total;
        }
        if (threadIdx.x == 0) lrow[nb] = run;
        __syncthreads();
        int at = 0;
        for (unsigned int e = threadIdx.x; e < run; e += blockDim.x) {
            int lo = at, hi = nb - 1;
            while (lo < hi) {
                const int mid = (lo + hi + 1) >> 1;
                if (lrow[mid] <= e) lo = mid;
                else hi = mid - 1;
            }
            at = lo;
            const long long g = __ldg(indptr + sssp_nfc_node(slots, nb, rank, lo)) + (e - lrow[lo]);
            ledge[e] = make_int2((int)sssp_nfc_place(place, __ldg(indices + g)), (int)__ldg(weights + g));
        }
    } else {
        unsigned short *deg16 = reinterpret_cast<unsigned short *>(lrow);
        for (int loc = threadIdx.x; loc < nb; loc += blockDim.x) {
            const int v = sssp_nfc_node(slots, nb, rank, loc);
            const long long deg = v >= 0 && v < n ? __ldg(indptr + v + 1) - __ldg(indptr + v) : 0;
            deg16[loc] = deg < 0xFFFF ? (unsigned short)deg : (unsigned short)0xFFFFu;
        }
    }
#if SSSP_NF_MANY
    }
    set_up = true;
#endif
    __syncthreads();
    if (threadIdx.x == 0) {
        const unsigned int at = sssp_nfc_place(place, source);
        if ((at >> 16) == rank) {
            const int loc = (int)(at & 0xFFFFu);
            dist[loc] = 0u;
            bits[loc >> 5] = 1u << (loc & 31);
        }
    }
    cluster.sync();  // every block's shared memory is set before any remote access

    sssp_d_t T = sssp_nf_threshold(0, delta);
    int p = 0, raises = 1;  // the first bucket counts, as in the grid solver (its raise 0)
    unsigned long long updates = 0, pops = 0;
    unsigned int largest = 0;
    bool done = false;
    const int lane = threadIdx.x & 31;
    while (p < limit) {
        const int par = p & 1;
        SSSP_NFC_MARK(p, 0, clock64());
        unsigned int *cur = bits + par * nw;
        unsigned int *nxt = bits + (par ^ 1) * nw;
        unsigned int left = SSSP_INF_BITS;  // smallest distance this thread leaves active
        if (threadIdx.x == 0) {
            alloc[par ^ 1] = 0ull;
            words[par ^ 1] = SSSP_INF_BITS;
        }
        // One taken node (slot loc, distance d) at list position at >> 32, first edge (low word);
        // past the list's capacity it stays active for the next step (d < T keeps T).
        auto put = [&](unsigned long long at, int loc, unsigned int d) {
            const unsigned int pos = (unsigned int)(at >> 32);
            if (pos < (unsigned int)cap) {
                if (resident) l_start[pos] = (int)lrow[loc];
                else l_node[pos] = sssp_nfc_node(slots, nb, rank, loc);
                l_dist[pos] = d;
                l_pre[pos] = (unsigned int)at;
            } else {
                if (pos == (unsigned int)cap) words[2] = (unsigned int)at;
                atomicOr(nxt + (loc >> 5), 1u << (loc & 31));
                left = min(left, d);
            }
        };
        // Scan (every warp runs the same rounds, so its lanes share one atomic per round): a node
        // with d < T joins the list, every other active node stays active. One 64-bit shared
        // atomic per warp and round hands out list entries and edge offsets together, so the
        // entries' first edges rise with their index (the walk's binary search needs that).
        for (int base = 0; base < nw; base += blockDim.x) {
            const int j = base + threadIdx.x;
            const unsigned int w = j < nw ? cur[j] : 0u;
            if (!__any_sync(SSSP_FULL_MASK, w != 0u)) continue;  // the whole warp idle this round
            unsigned int take = 0u;
            unsigned long long mine = 0ull;  // entries << 32 | edges of this thread's take
            if (w) {
                cur[j] = 0u;
                unsigned int keep = 0u, rest = w;
                while (rest) {
                    const int b = __ffs(rest) - 1;
                    rest &= rest - 1;
                    const int loc = (j << 5) | b;
                    const unsigned int d = dist[loc];
                    if (d < T) {
                        take |= 1u << b;
                        mine += (1ull << 32) | sssp_nfc_degree(resident, lrow, ldeg, indptr, slots, nb, rank, loc);
                    } else {
                        keep |= 1u << b;
                        left = min(left, d);
                    }
                }
                if (keep) atomicOr(nxt + j, keep);
            }
            unsigned long long incl = mine;
#pragma unroll
            for (int off = 1; off < 32; off <<= 1) {
                const unsigned long long y = __shfl_up_sync(SSSP_FULL_MASK, incl, off);
                if (lane >= off) incl += y;
            }
            unsigned long long first = 0ull;
            if (lane == 31 && incl) first = atomicAdd(alloc + par, incl);
            unsigned long long at = __shfl_sync(SSSP_FULL_MASK, first, 31) + incl - mine;
            while (take) {
                const int b = __ffs(take) - 1;
                take &= take - 1;
                const int loc = (j << 5) | b;
                const unsigned long long one = (1ull << 32) | sssp_nfc_degree(resident, lrow, ldeg, indptr, slots, nb, rank, loc);
                put(at, loc, dist[loc]);
                at += one;
            }
        }
        __syncthreads();
        const unsigned long long got = alloc[par];
        const unsigned int listed = (unsigned int)(got >> 32);
        const unsigned int len = min(listed, (unsigned int)cap);
        const unsigned int edges = listed > (unsigned int)cap ? words[2] : (unsigned int)got;
        SSSP_NFC_MARK(p, 1, clock64());
        if (!resident) {  // the entries' rows, in one round of loads
            for (unsigned int i = threadIdx.x; i < len; i += blockDim.x) l_start[i] = (int)__ldg(indptr + l_node[i]);
            __syncthreads();
        }
        SSSP_NFC_MARK(p, 6, clock64());
        SSSP_NFC_MARK(p, 4, len);
        SSSP_NFC_MARK(p, 5, edges);
        // Relax one edge to the node in slot (at >> 16, at & 0xFFFF) with distance nd. With local
        // work (lq > 0) a target of this block (spread: of any block) that falls below T joins this
        // block's queue, to be relaxed in this step; any other target that falls (or one past the
        // queue's capacity) is active in the next step.
        auto relax = [&](unsigned int at, unsigned int nd) {
            const unsigned int owner = at >> 16;
            const int tloc = (int)(at & 0xFFFFu);
            // Two calls, so that this block's own atomic stays a shared-memory instruction.
            const unsigned int was = owner == rank ? atomicMin(dist + tloc, nd)
                                                   : atomicMin(cluster.map_shared_rank(dist, owner) + tloc, nd);
            if (!(nd < was)) return;
            if (lq && nd < T && (spread || owner == rank)) {
                const unsigned int bit = 1u << (tloc & 31);
                if (owner == rank) {  // queued once (its queued bit): the pop reads the distance
                    __threadfence_block();  // the distance before the queued bit (the pop reads them in turn)
                    if (atomicOr(lbits + (tloc >> 5), bit) & bit) return;  // queued: its pop reads nd or less
                }
                atomicAdd(qpend, 1u);  // before the entry shows: nothing pending means nothing to pop
                const unsigned int q = atomicAdd(qtail, 1u);
                if (q < (unsigned int)lq) {
                    __threadfence_block();  // the count performed before the entry shows
                    const unsigned int tag = owner == rank ? SSSP_INF_BITS : nd;
                    reinterpret_cast<volatile unsigned long long *>(lqueue)[q] = (unsigned long long)tag << 32 | at;
                    return;
                }
                atomicSub(qpend, 1u);  // the queue is full: the next step relaxes it
                if (owner == rank) atomicAnd(lbits + (tloc >> 5), ~bit);
            }
            if (owner == rank) atomicOr(nxt + (tloc >> 5), 1u << (tloc & 31));
            else atomicOr(cluster.map_shared_rank(nxt, owner) + (tloc >> 5), 1u << (tloc & 31));
            left = min(left, nd);
        };
        // Walk: edge e of the list belongs to the last entry whose first edge is <= e.
        int i = 0;
        for (unsigned int e = threadIdx.x; e < edges; e += blockDim.x) {
            int lo = i, hi = (int)len - 1;
            while (lo < hi) {
                const int mid = (lo + hi + 1) >> 1;
                if (l_pre[mid] <= e) lo = mid;
                else hi = mid - 1;
            }
            i = lo;
            const long long edge = (long long)l_start[i] + (e - l_pre[i]);
            if (resident) {
                const int2 tw = ledge[edge];
                relax((unsigned int)tw.x, l_dist[i] + (unsigned int)tw.y);
            } else {
                relax(sssp_nfc_place(place, __ldg(indices + edge)), l_dist[i] + (unsigned int)__ldg(weights + edge));
            }
        }
        unsigned int step_local = 0;
        if (lq) {
            // Local work: every warp pops a queued node and relaxes its edges (a lane per edge)
            // until no node of this block is queued or being relaxed (qpend: a push counts before
            // its node shows, a pop after its edges are done). No block barrier in between: a
            // wave through this block's band costs a pop per hop, not a step. Only this block's
            // warps push here, so once the count is zero nothing more comes.
            __syncthreads();
            volatile unsigned int *vp = qpend;
            volatile unsigned long long *vqueue = lqueue;
            for (;;) {
                unsigned long long got = ~0ull;
                if (lane == 0) {
                    // A ticket per pop (no compare-and-swap race between the warps): the queue
                    // entry with the ticket's index is this warp's once written; none will be
                    // when nothing is pending, since a pushed entry stays pending until its
                    // ticket's holder has relaxed it.
                    const unsigned int h = atomicAdd(qhead, 1u);
                    for (;;) {
                        if (h < (unsigned int)lq && (got = vqueue[h]) != ~0ull) break;
                        if (*vp == 0u) break;
                        if (SSSP_NFC_SPIN_NS) __nanosleep(SSSP_NFC_SPIN_NS);
                    }
                    if (got != ~0ull && (unsigned int)(got >> 32) == SSSP_INF_BITS) {  // this block's node
                        const int slot = (int)(got & 0xFFFFu);
                        atomicAnd(lbits + (slot >> 5), ~(1u << (slot & 31)));  // a later fall queues it again
                        __threadfence_block();  // the bit before the distance
                    }
                }
                got = __shfl_sync(SSSP_FULL_MASK, got, 0);
                if (got == ~0ull) break;
                const unsigned int owner = (unsigned int)got >> 16, nd = (unsigned int)(got >> 32);
                const int slot = (int)(got & 0xFFFFu);
                // This block's node (nd: all ones): its edges at its distance now. Another block's:
                // its edges at nd, unless it was lowered again since (its newer entry relaxes it),
                // from the owner's shared memory. (Called apart, so this block's reads stay
                // shared-memory instructions.)
                auto pop = [&](const unsigned int *odist, const unsigned int *orow, const int2 *oedge) {
                    const unsigned int d = reinterpret_cast<const volatile unsigned int *>(odist)[slot];
                    if (d < nd && nd != SSSP_INF_BITS) return;
                    const unsigned int from = min(d, nd);
                    long long e0, e1;
                    if (resident) {
                        e0 = orow[slot];
                        e1 = orow[slot + 1];
                    } else {
                        const int v = sssp_nfc_node(slots, nb, owner, slot);
                        e0 = __ldg(indptr + v);
                        e1 = __ldg(indptr + v + 1);
                    }
                    for (long long e = e0 + lane; e < e1; e += 32) {
                        if (resident) {
                            const int2 tw = oedge[e];
                            relax((unsigned int)tw.x, from + (unsigned int)tw.y);
                        } else {
                            relax(sssp_nfc_place(place, __ldg(indices + e)), from + (unsigned int)__ldg(weights + e));
                        }
                    }
                };
                if (owner == rank) pop(dist, lrow, ledge);
                else pop(cluster.map_shared_rank(dist, owner), cluster.map_shared_rank(lrow, owner),
                         cluster.map_shared_rank(ledge, owner));
                __syncwarp();
                if (lane == 0) atomicSub(qpend, 1u);  // after its pushes (they counted first)
            }
            __syncthreads();
            step_local = min(*qtail, (unsigned int)lq);
            for (unsigned int k = threadIdx.x; k < step_local; k += blockDim.x) lqueue[k] = ~0ull;
            __syncthreads();  // every thread read qtail
            if (threadIdx.x == 0) *qhead = *qtail = 0u;
        }
        SSSP_NFC_MARK(p, 2, clock64());
        SSSP_NFC_MARK(p, 7, step_local);
        const unsigned int step_len = len;
        // Decide: the block's minimum left active, then (minimum, entries, local pops) to every inbox.
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) left = min(left, __shfl_xor_sync(SSSP_FULL_MASK, left, off));
        if (lane == 0 && left != SSSP_INF_BITS) atomicMin(words + par, left);
        __syncthreads();
        if (threadIdx.x < SSSP_NF_CLUSTER) {
            unsigned int *to = cluster.map_shared_rank(inbox, threadIdx.x) + 3 * (par * SSSP_NF_CLUSTER + rank);
            to[0] = words[par];
            to[1] = step_len;
            to[2] = step_local;
        }
        cluster.sync();
        SSSP_NFC_MARK(p, 3, clock64());
        unsigned int gmin = SSSP_INF_BITS, glen = 0u, gpops = 0u;
        if (lane < SSSP_NF_CLUSTER) {
            const unsigned int *from = inbox + 3 * (par * SSSP_NF_CLUSTER + lane);
            gmin = from[0];
            glen = from[1];
            gpops = from[2];
        }
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) {
            gmin = min(gmin, __shfl_xor_sync(SSSP_FULL_MASK, gmin, off));
            glen += __shfl_xor_sync(SSSP_FULL_MASK, glen, off);
            gpops += __shfl_xor_sync(SSSP_FULL_MASK, gpops, off);
        }
        ++p;
        updates += glen;
        pops += gpops;
        largest = max(largest, glen);
        if (gmin == SSSP_INF_BITS) {
            done = true;
            break;
        }
        if (!(gmin < T)) {
            T = sssp_nf_threshold(gmin, delta);
            ++raises;
        }
    }
    cluster.sync();  // no block leaves while another may still write to it
#if SSSP_NF_MANY
        // The row in the caller's dtype (unreached: the dtype's largest value, or +inf; int32
        // only where the host checked that every distance fits), and the job's summary.
        unsigned int *out = info + (long long)job * SSSP_RES_WORDS;
        const long long row = (long long)job * n;
        unsigned int got = 0;
        for (int loc = threadIdx.x; loc < nb; loc += blockDim.x) {
            const int v = sssp_nfc_node(slots, nb, rank, loc);
            if (v < 0 || v >= n) continue;
            const unsigned int d = dist[loc];
            const bool r = d != SSSP_INF_BITS;
            got += r ? 1u : 0u;
            if (out_kind == SSSP_OUT_I64) ((long long *)rows)[row + v] = r ? (long long)d : SSSP_UNREACHABLE_I64;
            else if (out_kind == SSSP_OUT_I32) ((int *)rows)[row + v] = r ? (int)d : SSSP_UNREACHABLE_I32;
            else if (out_kind == SSSP_OUT_F64) ((double *)rows)[row + v] = r ? (double)d : __longlong_as_double(0x7FF0000000000000ll);
            else ((float *)rows)[row + v] = r ? (float)d : __int_as_float(0x7F800000);
        }
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) got += __shfl_xor_sync(SSSP_FULL_MASK, got, off);
        if (lane == 0 && got) atomicAdd(reinterpret_cast<unsigned long long *>(out + SSSP_RES_REACHED), (unsigned long long)got);
        if (rank == 0 && threadIdx.x == 0) {
            out[SSSP_RES_CTRL + SSSP_CTRL_PHASE] = (unsigned int)(p + 1);
            out[SSSP_RES_CTRL + SSSP_CTRL_DONE] = done ? 1u : 0u;
            out[SSSP_RES_CTRL + SSSP_CTRL_BUCKETS] = (unsigned int)raises;
            out[SSSP_RES_NF + SSSP_NF_MAXL] = largest;
            out[SSSP_RES_NF + SSSP_NF_POPS] = (unsigned int)min(pops, 0xFFFFFFFFull);
            out[SSSP_RES_NF + SSSP_NF_SUM] = (unsigned int)updates;
            out[SSSP_RES_NF + SSSP_NF_SUM + 1] = (unsigned int)(updates >> 32);
        }
    }
#else
    for (int loc = threadIdx.x; loc < nb; loc += blockDim.x) {
        const int v = sssp_nfc_node(slots, nb, rank, loc);
        if (v >= 0 && v < n) key[v] = ((sssp_key_t)dist[loc] << 32) | (sssp_key_t)SSSP_NO_PRED;
    }
    if (rank == 0 && threadIdx.x == 0) {
        ctrl[SSSP_CTRL_PHASE] = (unsigned int)(p + 1);
        ctrl[SSSP_CTRL_DONE] = done ? 1u : 0u;
        ctrl[SSSP_CTRL_BUCKETS] = (unsigned int)raises;
        ctrl[SSSP_CTRL_ABORT] = 0u;  // the limit shows as not done
        cnt[SSSP_NF_MAXL] = largest;
        cnt[SSSP_NF_POPS] = (unsigned int)min(pops, 0xFFFFFFFFull);
        *reinterpret_cast<unsigned long long *>(cnt + SSSP_NF_SUM) = updates;
    }
#endif
}
#endif
