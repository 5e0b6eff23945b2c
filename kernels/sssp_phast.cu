// ---- PHAST: a contraction hierarchy's sweep, one dependent step per level ---------------------
// Delling, Goldberg, Nowatzyk and Werneck's PHAST (IPDPS 2011). The host builds a contraction
// hierarchy once per graph (sssp/hierarchy.py) and, per solve, searches the upward edges from the
// source (a few hundred nodes on a road network): its distances arrive as seeds (position,
// distance). Where the host keeps a core table (the distances between the nodes of the top
// levels), the core's distances arrive as seeds too and the arrays below describe only the
// levels under the core (level_ptr starts at the core's end; down_ptr counts from the first
// in-edge below it). This kernel sweeps the levels from the top: a node's distance is the
// least of its seed and, over its downward in-edges (u, v, w) from higher levels, u's distance
// plus w. The nodes of one level are independent, so a level is one step of the sweep, with no
// atomics (each node is written once). A node's in-edges are split over a group of lanes (up
// to `width`, as many as the level's size leaves threads for) whose least is taken by warp
// shuffles, so a level waits for a few edge reads, not for the chain of its longest row.
//
// Positions: the host numbers the nodes by the sweep's order (order[p] is the node at position
// p, the top level first), the downward edges by the position of their head (down_ptr) and their
// tail's position (down_pos); pword holds the distances by position, so a level is a contiguous
// slice and a thread's reads of the levels above hit few lines.
//   top       the positions of the first `small` levels (the top of the hierarchy, each level
//             at most a block's threads): block 0 sweeps them alone with block barriers, their
//             distances in shared memory (every in-edge of a top node comes from a top node).
//             The in-edges of the first `staged` of them are copied into shared memory too, at
//             the start, in coalesced passes: a level is then a chain of shared-memory reads,
//             not of L2 round trips (the edges of positions below level_ptr[staged] are the
//             first down_ptr[level_ptr[staged]] edges, one contiguous run).
//   the rest  every other level, by the whole grid, with no grid barrier: a node's distance is
//             published with the solve's generation (pword), and a thread that reads a tail
//             waits for that stamp (dataflow). A thread takes its nodes level by level, top
//             down, and every tail sits on a level above its head, so with the grid resident
//             the least unfinished position always has its tails published: no deadlock. A
//             level's wait is one published store seen by one poll, not a grid barrier; the
//             threads with nothing to do on a level go on to the next, load their rows and
//             edges there and poll, so a level's critical path is the tails' distances alone.
//             A thread that waits long naps between polls (doubling up to `nap` ns), so the
//             polls of threads far ahead do not crowd the L2 the wavefront reads.
//   pword     32-bit distances: (generation << 32) | distance, one 64-bit word (a relaxed load
//             sees both or neither). 64-bit distances: the distance, and pgen[p] = generation
//             stored after it with release semantics (read with acquire).
//   seeds     block 0 copies the seeds of positions below the top to seed_val / seed_gen, then
//             stamps seed_gen[n] with the generation (release); every other block waits for that
//             stamp before its first level. With seed_flag (host memory mapped into the device)
//             the launch came before the host's search: seed_pos / seed_d are mapped host memory
//             too, and block 0 first waits until seed_flag[0] holds the generation (the host
//             stores it last), then takes the count from seed_flag[1] instead of nseeds; it
//             stages its edges before that wait, so they load while the host searches. A wait
//             for the seeds gives up after 10 s of the device's clock (ctrl[ABORT]).
//   search    with `source` >= 0 the device searches upward itself, block 0 alone, before its
//             top levels (no seeds from the host, no copy): the levels from the source's up, one
//             block barrier each; a level's reached positions (the list `bag` keeps at the
//             level's first position, its count in shared memory) each stall-checked over their
//             downward in-edges, and the others seeds that relax their upward edges (a node's
//             edges split over up to 32 lanes, as a level's size leaves threads; atomicMin
//             on `sdist`, whose 64-bit words are all ones between solves: the first to lower
//             one lists its position). The core's nodes the search reached are listed at the
//             front of `bag`; every core distance is the least over them of the entry's
//             distance plus its table row. Block 0 puts every word it lowered back to all ones
//             at its end.
//   labels    with `nentries` > 0 the seeds are the source's kept upward search (its label, read
//             from the device's copy of every position's: no search, no copy): the first
//             `nentries` are core nodes the search reached, whose table rows give the core's
//             distances (as the device's search takes them), the others seeds below the core.
//             Where block 0 sweeps no top level (`small` 0), every block takes a share of the
//             core's positions and publishes their distances itself (sssp_ph_core_by_grid), and
//             block 0 keeps none of them in shared memory; the host then passes the table and
//             `ncore` with every label, one with no entries too (no path to the core).
// Each node's key is written as near-far leaves it (sssp_nf_finish: the distance, no predecessor
// yet), so the engine's tree pass (sssp_nf_tree) and result pass read a PHAST solve as they read
// a near-far one; ctrl[PHASE] = levels + 1 (the engine reports levels as the steps) and
// ctrl[DONE] = 1 at the end. The generation number marks this solve's seeds and distances: no
// clearing between solves (the host clears every stamp when the number wraps). A wait that takes
// seconds (a grid that was not resident) sets ctrl[ABORT], and every later wait gives up.
// Integer distances only (the hierarchy's shortcut weights are exact integer sums); a sum is
// taken in 64 bits, so a 32-bit distance plus a heavy shortcut cannot wrap.
#define SSSP_PH_ARGS                                                                              \
    sssp_key_t *key, unsigned int *ctrl, const int *__restrict__ order,                          \
        const int *__restrict__ level_ptr, const long long *__restrict__ down_ptr,               \
        const int *__restrict__ down_pos, const sssp_d_t *__restrict__ down_w,                    \
        unsigned long long *pword, unsigned int *pgen, unsigned int *seed_gen, sssp_d_t *seed_val, \
        const int *__restrict__ seed_pos, const sssp_d_t *__restrict__ seed_d, int nseeds,        \
        unsigned int gen, int levels, int small, int staged, int width, int nap,                  \
        const unsigned int *seed_flag, int source, const long long *__restrict__ up_ptr,          \
        const int *__restrict__ up_pos, const sssp_d_t *__restrict__ up_w,                        \
        const int *__restrict__ slevel, unsigned long long *sdist, int *bag,                      \
        const sssp_d_t *__restrict__ table, int ncore, int nlev, int nentries

#if !SSSP_FLOAT
__device__ __forceinline__ sssp_key_t sssp_ph_key(sssp_d_t d) {
#if SSSP_PACKED
    return ((sssp_key_t)d << 32) | (sssp_key_t)SSSP_NO_PRED;  // INF: every bit set (SSSP_KEY_INF)
#else
    return sssp_bits(d);
#endif
}

// Lanes per node on a level of `nodes` swept by `threads`: the most, a power of two up to `width`
// (1 to 32), that still give every node of the level its own group in one pass. A node's
// in-edges are split over its group, so the top levels (few nodes, each with 10-25 in-edges
// on roads and meshes) wait for one or two edge reads a level instead of a chain of 25.
__device__ __forceinline__ int sssp_ph_lanes(long long nodes, long long threads, int width) {
    int lanes = width;
    while (lanes > 1 && (long long)lanes * nodes > threads) lanes >>= 1;
    return lanes;
}

// The least of `v` over each aligned group of `lanes` lanes; every lane of the warp calls it.
__device__ __forceinline__ sssp_d_t sssp_ph_group_min(sssp_d_t v, int lanes) {
    for (int o = lanes >> 1; o > 0; o >>= 1) {
        const sssp_d_t w = __shfl_xor_sync(0xffffffffu, v, o);
        v = w < v ? w : v;
    }
    return v;
}

// Publishing and reading a grid position's distance (see "pword" above). Relaxed and release
// accesses at GPU scope: they reach L2, and no L1 keeps a stale copy of another block's word.
__device__ __forceinline__ unsigned long long sssp_ph_ld64(const unsigned long long *p) {
    unsigned long long v;
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ void sssp_ph_st64(unsigned long long *p, unsigned long long v) {
    asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
__device__ __forceinline__ unsigned int sssp_ph_acquire(const unsigned int *p) {
    unsigned int v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ void sssp_ph_release(unsigned int *p, unsigned int v) {
    asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
// The device's clock in ns, and how long a wait for the seeds may take before the sweep gives up
// (ctrl[ABORT]): long enough for a host that is preempted or collecting garbage mid-search.
#define SSSP_PH_WAIT_NS 10000000000ull
__device__ __forceinline__ unsigned long long sssp_ph_clock() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
// Host memory mapped into the device (the seeds a host writes after the launch): loads at system
// scope, so a poll sees the host's store and the seeds read after it the host's earlier ones.
__device__ __forceinline__ unsigned int sssp_ph_acquire_sys(const unsigned int *p) {
    unsigned int v;
    asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ unsigned int sssp_ph_ld_sys(const unsigned int *p) {
    unsigned int v;
    asm volatile("ld.relaxed.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ unsigned long long sssp_ph_ld_sys(const unsigned long long *p) {
    unsigned long long v;
    asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

#if SSSP_DIST_BITS == 32
// One word: the generation above the distance.
__device__ __forceinline__ unsigned long long sssp_ph_peek(const unsigned long long *pword, const unsigned int *,
                                                           int u) {
    return sssp_ph_ld64(pword + u);
}
__device__ __forceinline__ bool sssp_ph_ready(unsigned long long w, unsigned int gen) {
    return (unsigned int)(w >> 32) == gen;
}
__device__ __forceinline__ sssp_d_t sssp_ph_value(unsigned long long w, const unsigned long long *, int) {
    return (sssp_d_t)(unsigned int)w;
}
__device__ __forceinline__ void sssp_ph_publish(unsigned long long *pword, unsigned int *, long long p, sssp_d_t d,
                                                unsigned int gen) {
    sssp_ph_st64(pword + p, ((unsigned long long)gen << 32) | (unsigned long long)d);
}
#else
// The stamp (acquire), then the distance stored before it.
__device__ __forceinline__ unsigned long long sssp_ph_peek(const unsigned long long *, const unsigned int *pgen,
                                                           int u) {
    return sssp_ph_acquire(pgen + u);
}
__device__ __forceinline__ bool sssp_ph_ready(unsigned long long w, unsigned int gen) {
    return (unsigned int)w == gen;
}
__device__ __forceinline__ sssp_d_t sssp_ph_value(unsigned long long, const unsigned long long *pword, int u) {
    return (sssp_d_t)sssp_ph_ld64(pword + u);
}
__device__ __forceinline__ void sssp_ph_publish(unsigned long long *pword, unsigned int *pgen, long long p, sssp_d_t d,
                                                unsigned int gen) {
    sssp_ph_st64(pword + p, (unsigned long long)d);
    sssp_ph_release(pgen + p, gen);
}
#endif

// Tail u's distance once it is published: polls, napping from 32 ns up to `nap` ns between them.
// After about 2^22 polls (seconds) sets ctrl[ABORT]; once that is set, returns infinity at once
// (the host reports the abort; the distances are then meaningless).
__device__ __noinline__ sssp_d_t sssp_ph_wait(const unsigned long long *pword, const unsigned int *pgen, int u,
                                              unsigned int gen, unsigned int *ctrl, int nap) {
    unsigned int ns = 32;
    for (long long polls = 1;; ++polls) {
        if ((polls & 63) == 0) {
            if (((volatile unsigned int *)ctrl)[SSSP_CTRL_ABORT]) return (sssp_d_t)SSSP_INF_BITS;
            if (polls > (1ll << 22)) {
                atomicExch(ctrl + SSSP_CTRL_ABORT, 1u);
                return (sssp_d_t)SSSP_INF_BITS;
            }
        }
        if (nap > 0) {
            __nanosleep(ns);
            if ((int)ns < nap) ns <<= 1;
        }
        const unsigned long long w = sssp_ph_peek(pword, pgen, u);
        if (sssp_ph_ready(w, gen)) return sssp_ph_value(w, pword, u);
    }
}

// The device's upward search (see "search" above), block 0's threads, after the caller zeroed the
// `nlev` + 1 counters `cnt` (`nlev`: the hierarchy's levels below the core, whatever `levels`
// the sweep is given) and met at a block barrier: the seeds below the top into
// seed_val / seed_gen, those of the top into `sd`, the core's distances into sd[0, ncore); the
// seeds' count into ctrl[SEEDS]. A sum past the distance type's largest finite value (64-bit:
// int64's) reaches nothing, as on the host.
#define SSSP_PH_NONE 0xFFFFFFFFFFFFFFFFull
#if SSSP_DIST_BITS == 32
#define SSSP_PH_CAP 0xFFFFFFFEull
#else
#define SSSP_PH_CAP 0x7FFFFFFFFFFFFFFFull
#endif
// The core's distances into sd[0, ncore), block 0's threads: the least over `entries` entries
// (entry(i, e, de): the i-th entry's position e and distance de) of de plus the table's row e.
// A thread takes SSSP_PH_CORE_COLS columns a block's width apart and reads an entry's row at all
// of them at once, four entries a round: sixteen loads in flight, not four, so the merge waits
// for a few L2 round trips (fe_body: 21 entries x 3 909 columns, 1 024 threads), not for 21.
#define SSSP_PH_CORE_COLS 4
template <typename Entry>
__device__ __forceinline__ void sssp_ph_through_core(int entries, Entry entry, const sssp_d_t *__restrict__ table,
                                                     int ncore, sssp_d_t *sd) {
    const int stride = SSSP_PH_CORE_COLS * blockDim.x;
    for (int c0 = threadIdx.x; c0 < ncore; c0 += stride) {
        unsigned long long best[SSSP_PH_CORE_COLS];
#pragma unroll
        for (int k = 0; k < SSSP_PH_CORE_COLS; ++k) best[k] = SSSP_PH_NONE;
#pragma unroll 4
        for (int i = 0; i < entries; ++i) {
            int e;
            unsigned long long de;
            entry(i, e, de);
            const sssp_d_t *__restrict__ row = table + (long long)e * ncore;
#pragma unroll
            for (int k = 0; k < SSSP_PH_CORE_COLS; ++k) {
                const int c = c0 + k * (int)blockDim.x;
                const sssp_d_t t = c < ncore ? __ldg(row + c) : (sssp_d_t)SSSP_INF_BITS;
                const unsigned long long v = de + (unsigned long long)t;
                if (t != (sssp_d_t)SSSP_INF_BITS && v < best[k]) best[k] = v;
            }
        }
#pragma unroll
        for (int k = 0; k < SSSP_PH_CORE_COLS; ++k) {
            const int c = c0 + k * (int)blockDim.x;
            if (c < ncore) sd[c] = best[k] > SSSP_PH_CAP ? (sssp_d_t)SSSP_INF_BITS : (sssp_d_t)best[k];
        }
    }
}

// The core's distances by the whole grid, published as the levels below read them (pword and
// the key), for a label's `entries` when block 0 sweeps no top level (`small` 0: no block needs
// them in shared memory; none of the core's distances is kept there). The grid's warp w takes
// core positions w, w + warps, ...; its lanes split the entries and the least is taken by
// shuffles: one L2 round trip for the table, on every multiprocessor at once, where block 0 alone
// waited for its threads' columns one after another. No entries: no path, every core distance
// infinity.
__device__ __forceinline__ void sssp_ph_core_by_grid(int entries, const int *__restrict__ seed_pos,
                                                     const sssp_d_t *__restrict__ seed_d,
                                                     const sssp_d_t *__restrict__ table, int ncore,
                                                     unsigned long long *pword, unsigned int *pgen, unsigned int gen,
                                                     sssp_key_t *key, const int *__restrict__ order) {
    const int lane = threadIdx.x & 31;
    const long long warps = ((long long)gridDim.x * blockDim.x) >> 5;
    const long long first = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    for (long long c = first; c < ncore; c += warps) {  // warp-uniform: whole warps shuffle
        unsigned long long best = SSSP_PH_NONE;
        for (int i = lane; i < entries; i += 32) {
            const sssp_d_t t = __ldg(table + (long long)__ldg(seed_pos + i) * ncore + c);
            const unsigned long long v = (unsigned long long)__ldg(seed_d + i) + (unsigned long long)t;
            if (t != (sssp_d_t)SSSP_INF_BITS && v < best) best = v;
        }
        for (int o = 16; o > 0; o >>= 1) {
            const unsigned long long w = __shfl_xor_sync(0xffffffffu, best, o);
            best = w < best ? w : best;
        }
        if (lane == 0) {
            const sssp_d_t d = best > SSSP_PH_CAP ? (sssp_d_t)SSSP_INF_BITS : (sssp_d_t)best;
            sssp_ph_publish(pword, pgen, c, d, gen);
            key[__ldg(order + c)] = sssp_ph_key(d);
        }
    }
}

__device__ __noinline__ void sssp_ph_search(int source, int top, int nlev, unsigned int gen, const int *level_ptr,
                                            const long long *__restrict__ down_ptr,
                                            const int *__restrict__ down_pos, const sssp_d_t *__restrict__ down_w,
                                            const long long *__restrict__ up_ptr, const int *__restrict__ up_pos,
                                            const sssp_d_t *__restrict__ up_w, const int *__restrict__ slevel,
                                            unsigned long long *sdist, int *bag, const sssp_d_t *__restrict__ table,
                                            int ncore, int *cnt, sssp_d_t *sd, sssp_d_t *seed_val,
                                            unsigned int *seed_gen, unsigned int *ctrl) {
    __shared__ int sssp_ph_found;
    const int sl = slevel[source];
    if (sl < 0) {  // a core node: its table row
        for (int c = threadIdx.x; c < ncore; c += blockDim.x) sd[c] = table[(long long)source * ncore + c];
        if (threadIdx.x == 0) ctrl[SSSP_CTRL_SEEDS] = 0u;
        return;
    }
    if (threadIdx.x == 0) {
        sdist[source] = 0ull;
        bag[level_ptr[sl]] = source;
        cnt[sl] = 1;
        sssp_ph_found = 0;
    }
    sssp_block_sync();
    for (int l = sl; l >= 0; --l) {
        // A level's nodes in passes of blockDim / lanes (block-uniform, so whole warps shuffle),
        // each node's edges split over its group of lanes as the sweep splits them: a level
        // waits for a few atomics of each node, not for the chain of its longest row.
        const int m = cnt[l], b = level_ptr[l];
        const int lanes = sssp_ph_lanes(m, blockDim.x, 32);
        const int lane = threadIdx.x & (lanes - 1), per = blockDim.x / lanes;
        for (int base = 0; base < m; base += per) {
            const int i = base + threadIdx.x / lanes;
            const bool live = i < m;
            const int u = live ? sssp_ldcg(bag + b + i) : 0;
            const unsigned long long d = live ? sssp_ldcg(sdist + u) : 0ull;
            int stall = 0;
            if (live) {
                const long long de = __ldg(down_ptr + u + 1);
                for (long long j = __ldg(down_ptr + u) + lane; j < de && !stall; j += lanes) {
                    const unsigned long long dx = sssp_ldcg(sdist + __ldg(down_pos + j));
                    stall = dx != SSSP_PH_NONE && dx + (unsigned long long)__ldg(down_w + j) < d;
                }
            }
            for (int o = lanes >> 1; o > 0; o >>= 1) stall |= __shfl_xor_sync(0xffffffffu, stall, o);
            if (!live || stall) continue;
            if (lane == 0) {
                atomicAdd(&sssp_ph_found, 1);
                if (u < top) {
                    sd[u] = (sssp_d_t)d;
                } else {
                    seed_val[u] = (sssp_d_t)d;
                    seed_gen[u] = gen;
                }
            }
            const long long ue = __ldg(up_ptr + u + 1);
            for (long long j = __ldg(up_ptr + u) + lane; j < ue; j += lanes) {
                const unsigned long long nd = d + (unsigned long long)__ldg(up_w + j);
                if (nd > SSSP_PH_CAP) continue;
                const int x = __ldg(up_pos + j);
                if (atomicMin(sdist + x, nd) == SSSP_PH_NONE) {  // first reached: onto its list
                    const int lx = __ldg(slevel + x);
                    if (lx < 0) {
                        bag[atomicAdd(cnt + nlev, 1)] = x;
                    } else {
                        bag[level_ptr[lx] + atomicAdd(cnt + lx, 1)] = x;
                    }
                }
            }
        }
        sssp_block_sync();
    }
    sssp_ph_through_core(cnt[nlev], [&](int i, int &e, unsigned long long &de) {
        e = sssp_ldcg(bag + i);
        de = sssp_ldcg(sdist + e);
    }, table, ncore, sd);
    if (threadIdx.x == 0) ctrl[SSSP_CTRL_SEEDS] = (unsigned int)sssp_ph_found;
}

// Every `sdist` word the search lowered back to all ones (block 0, after its last use).
__device__ __forceinline__ void sssp_ph_forget(int nlev, const int *level_ptr, const int *cnt, const int *bag,
                                               unsigned long long *sdist) {
    for (int l = 0; l <= nlev; ++l) {
        const int m = cnt[l], b = l < nlev ? level_ptr[l] : 0;
        for (int i = threadIdx.x; i < m; i += blockDim.x) sdist[sssp_ldcg(bag + b + i)] = SSSP_PH_NONE;
    }
}

// The least of `best` and, over p's downward in-edges lane, lane + lanes, ..., the tail's distance
// plus the weight. A lane has four edges' loads in flight before it reads their tails' distances.
// Edges, row offsets and tails come from global memory (kStaged: from the shared-memory copies
// `ptr`, `pos`, `w`, by the same indices); the tails' distances from `dist` (shared memory, the
// top: kShared) or, below the top, from pword as they are published (four polls in flight).
template <bool kShared, bool kStaged, typename P>
__device__ __forceinline__ sssp_d_t sssp_ph_pull(const P *__restrict__ ptr, const int *__restrict__ pos,
                                                 const sssp_d_t *__restrict__ w, const sssp_d_t *dist,
                                                 const unsigned long long *pword, const unsigned int *pgen,
                                                 unsigned int gen, unsigned int *ctrl, int nap, long long p,
                                                 int lane, int lanes, sssp_d_t best) {
    const long long e = kStaged ? (long long)ptr[p + 1] : (long long)__ldg(ptr + p + 1);
    for (long long j = (kStaged ? (long long)ptr[p] : (long long)__ldg(ptr + p)) + lane; j < e; j += 4 * lanes) {
        int u[4];
        sssp_d_t c[4];
#pragma unroll
        for (int k = 0; k < 4; ++k) {
            const long long jj = j + (long long)k * lanes;
            u[k] = jj < e ? (kStaged ? pos[jj] : __ldg(pos + jj)) : -1;
            c[k] = jj < e ? (kStaged ? w[jj] : __ldg(w + jj)) : (sssp_d_t)0;
        }
        sssp_d_t du[4];
        if (kShared) {
#pragma unroll
            for (int k = 0; k < 4; ++k) du[k] = u[k] >= 0 ? dist[u[k]] : (sssp_d_t)SSSP_INF_BITS;
        } else {
            unsigned long long pk[4];
#pragma unroll
            for (int k = 0; k < 4; ++k) pk[k] = u[k] >= 0 ? sssp_ph_peek(pword, pgen, u[k]) : 0ull;
#pragma unroll
            for (int k = 0; k < 4; ++k) {
                du[k] = (sssp_d_t)SSSP_INF_BITS;
                if (u[k] >= 0) {
                    du[k] = sssp_ph_ready(pk[k], gen) ? sssp_ph_value(pk[k], pword, u[k])
                                                      : sssp_ph_wait(pword, pgen, u[k], gen, ctrl, nap);
                }
            }
        }
#pragma unroll
        for (int k = 0; k < 4; ++k) {
            if (du[k] != (sssp_d_t)SSSP_INF_BITS) {
                const unsigned long long t = (unsigned long long)du[k] + (unsigned long long)c[k];
                if (t < (unsigned long long)best) best = (sssp_d_t)t;
            }
        }
    }
    return best;
}

extern "C" __global__ void __launch_bounds__(1024) sssp_ph_sweep(SSSP_PH_ARGS) {
    extern __shared__ __align__(16) unsigned char sssp_ph_smem[];
    sssp_d_t *sd = reinterpret_cast<sssp_d_t *>(sssp_ph_smem);
    const int n = level_ptr[levels];
    // A label's core distances by the whole grid where no top level needs them in block 0 (the
    // host passes the table with every label, entries or none: none gives no path to the core).
    const bool grid_core = ncore > 0 && small == 0 && source < 0;
    // The positions whose distances block 0 keeps in shared memory: the core's and the top
    // levels', none where the grid takes the core.
    const int top = grid_core ? 0 : level_ptr[small];
    // The staged levels' positions [first, pst) (first: the first level below the core).
    const int first = level_ptr[0], pst = level_ptr[staged];
    if (blockIdx.x == 0) {
        // Shared memory: the top's distances, then the staged edges' weights, their row offsets
        // (sptr[p - first] for position p) and their tails (the distance type first, for its
        // alignment).
        const int est = (int)down_ptr[pst];
        sssp_d_t *sw = sd + top;
        int *sptr = reinterpret_cast<int *>(sw + est);
        int *spos = sptr + (pst - first) + 1;
        int *scnt = spos + est;  // the device's search: its lists' counts
        __shared__ int sssp_ph_nseeds;
        for (int p = threadIdx.x; p < top; p += blockDim.x) sd[p] = (sssp_d_t)SSSP_INF_BITS;
        if (source >= 0) {
            for (int l = threadIdx.x; l <= nlev; l += blockDim.x) scnt[l] = 0;
        }
        // The staged edges first: they need no seed, so with seed_flag they load while the host
        // searches (the grid cannot start a level before block 0 publishes the top anyway).
        for (int j = threadIdx.x; j < est; j += blockDim.x) {
            sw[j] = __ldg(down_w + j);
            spos[j] = __ldg(down_pos + j);
        }
        for (int p = threadIdx.x; p <= pst - first; p += blockDim.x) sptr[p] = (int)__ldg(down_ptr + first + p);
        if (threadIdx.x == 0 && source < 0) {
            int count = nseeds;
            if (seed_flag != nullptr) {  // launched before the host's search: wait for its seeds
                const unsigned long long t0 = sssp_ph_clock();
                unsigned int ns = 32;
                for (long long polls = 1; sssp_ph_acquire_sys(seed_flag) != gen; ++polls) {
                    if (((volatile unsigned int *)ctrl)[SSSP_CTRL_ABORT] ||
                        ((polls & 63) == 0 && sssp_ph_clock() - t0 > SSSP_PH_WAIT_NS)) {
                        atomicExch(ctrl + SSSP_CTRL_ABORT, 1u);
                        break;
                    }
                    __nanosleep(ns);
                    if (ns < 1024) ns <<= 1;
                }
                count = ((volatile unsigned int *)ctrl)[SSSP_CTRL_ABORT] ? 0 : (int)sssp_ph_ld_sys(seed_flag + 1);
            }
            sssp_ph_nseeds = count;
        }
        sssp_block_sync();
        if (source >= 0) {
            sssp_ph_search(source, top, nlev, gen, level_ptr, down_ptr, down_pos, down_w, up_ptr, up_pos, up_w,
                           slevel, sdist, bag, table, ncore, scnt, sd, seed_val, seed_gen, ctrl);
        }
        const int count = source >= 0 ? 0 : sssp_ph_nseeds;
        if (nentries > 0 && !grid_core) {  // a label: its entries give the core's distances
            sssp_ph_through_core(nentries, [&](int i, int &e, unsigned long long &de) {
                e = __ldg(seed_pos + i);
                de = (unsigned long long)__ldg(seed_d + i);
            }, table, ncore, sd);
        }
        for (int i = (nentries > 0 ? nentries : 0) + threadIdx.x; i < count; i += blockDim.x) {
            int p;
            sssp_d_t d;
            if (seed_flag != nullptr) {
                p = (int)sssp_ph_ld_sys(reinterpret_cast<const unsigned int *>(seed_pos) + i);
                d = (sssp_d_t)sssp_ph_ld_sys(seed_d + i);
            } else {
                p = seed_pos[i];
                d = seed_d[i];
            }
            if (p < top) {
                sd[p] = d;
            } else {
                seed_val[p] = d;
                seed_gen[p] = gen;
            }
        }
        sssp_block_sync();
        if (threadIdx.x == 0) {  // the seeds below the top are out: the other blocks may start
            __threadfence();
            sssp_ph_release(seed_gen + n, gen);
        }
        if (grid_core) {
            sssp_ph_core_by_grid(nentries, seed_pos, seed_d, table, ncore, pword, pgen, gen, key, order);
        }
        // A level in passes of blockDim / lanes nodes (block-uniform, so whole warps shuffle).
        for (int l = 0; l < small; ++l) {
            const int b = level_ptr[l], e = level_ptr[l + 1];
            const int lanes = sssp_ph_lanes(e - b, blockDim.x, width);
            const int lane = threadIdx.x & (lanes - 1), per = blockDim.x / lanes;
            for (int base = b; base < e; base += per) {
                const int p = base + threadIdx.x / lanes;
                sssp_d_t best = (sssp_d_t)SSSP_INF_BITS;
                if (p < e) {
                    // sptr - first: the staged offsets indexed by position, as down_ptr is.
                    best = l < staged ? sssp_ph_pull<true, true>(sptr - first, spos, sw, sd, pword, pgen, gen, ctrl,
                                                                 nap, p, lane, lanes, sd[p])
                                      : sssp_ph_pull<true, false>(down_ptr, down_pos, down_w, sd, pword, pgen, gen,
                                                                  ctrl, nap, p, lane, lanes, sd[p]);
                }
                best = sssp_ph_group_min(best, lanes);
                if (p < e && lane == 0) sd[p] = best;
            }
            sssp_block_sync();
        }
        for (int p = threadIdx.x; p < top; p += blockDim.x) {
            sssp_ph_publish(pword, pgen, p, sd[p], gen);
            key[__ldg(order + p)] = sssp_ph_key(sd[p]);
        }
    } else {
        if (grid_core) {
            sssp_ph_core_by_grid(nentries, seed_pos, seed_d, table, ncore, pword, pgen, gen, key, order);
        }
        if (small < levels && threadIdx.x == 0) {  // block 0 may itself wait for the host (seed_flag): by the clock
            const unsigned long long t0 = sssp_ph_clock();
            for (long long polls = 1; sssp_ph_acquire(seed_gen + n) != gen; ++polls) {
                if (((volatile unsigned int *)ctrl)[SSSP_CTRL_ABORT] ||
                    ((polls & 63) == 0 && sssp_ph_clock() - t0 > SSSP_PH_WAIT_NS)) {
                    atomicExch(ctrl + SSSP_CTRL_ABORT, 1u);
                    break;
                }
                __nanosleep(32);
            }
        }
        sssp_block_sync();
    }
    const long long threads = (long long)gridDim.x * blockDim.x;
    const long long g = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    for (int l = small; l < levels; ++l) {
        const long long b = level_ptr[l], e = level_ptr[l + 1];
        const int lanes = sssp_ph_lanes(e - b, threads, width);
        const int lane = threadIdx.x & (lanes - 1);
        const long long per = threads / lanes;
        for (long long base = b; base < e; base += per) {  // grid-uniform: whole warps shuffle
            const long long p = base + g / lanes;
            sssp_d_t best = (sssp_d_t)SSSP_INF_BITS;
            if (p < e) {
                if (lane == 0 && sssp_ldcg(seed_gen + p) == gen) best = sssp_ldcg(seed_val + p);
                best = sssp_ph_pull<false, false>(down_ptr, down_pos, down_w, nullptr, pword, pgen, gen, ctrl, nap, p,
                                                  lane, lanes, best);
            }
            best = sssp_ph_group_min(best, lanes);
            if (p < e && lane == 0) {
                sssp_ph_publish(pword, pgen, p, best, gen);
                key[__ldg(order + p)] = sssp_ph_key(best);
            }
        }
    }
    if (blockIdx.x == 0 && source >= 0) {
        const int est = (int)down_ptr[pst];
        const int *scnt = reinterpret_cast<const int *>(sd + top + est) + (pst - first) + 1 + est;
        sssp_ph_forget(nlev, level_ptr, scnt, bag, sdist);
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        ctrl[SSSP_CTRL_PHASE] = (unsigned int)levels + 1u;
        ctrl[SSSP_CTRL_DONE] = 1u;
    }
}
#endif
