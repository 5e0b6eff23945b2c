// ---- PHAST: a contraction hierarchy's sweep, one dependent step per level ---------------------
// Delling, Goldberg, Nowatzyk and Werneck's PHAST (IPDPS 2011). The host builds a contraction
// hierarchy once per graph (sssp/hierarchy.py) and, per solve, runs the Dijkstra over the upward
// edges from the source (a few hundred nodes on a road network): its distances arrive as seeds
// (position, distance). This kernel sweeps the levels from the top: a node's distance is the
// least of its seed and, over its downward in-edges (u, v, w) from higher levels, u's distance
// plus w. The nodes of one level are independent, so a level is one step of the sweep, with no
// atomics (each node is written once). A node's in-edges are split over a group of lanes (up
// to `width`, as many as the level's size leaves threads for) whose least is taken by warp
// shuffles, so a level waits for a few edge reads, not for the chain of its longest row.
//
// Positions: the host numbers the nodes by the sweep's order (order[p] is the node at position
// p, the top level first), the downward edges by the position of their head (down_ptr) and their
// tail's position (down_pos); pdist holds the distances by position, so a level is a contiguous
// slice and a thread's reads of the levels above hit few lines.
//   top       the positions of the first `small` levels (the top of the hierarchy, each level
//             at most a block's threads): block 0 sweeps them alone with block barriers, their
//             distances in shared memory (every in-edge of a top node comes from a top node).
//             The in-edges of the first `staged` of them are copied into shared memory too, at
//             the start, in coalesced passes: a level is then a chain of shared-memory reads,
//             not of L2 round trips (the edges of positions below level_ptr[staged] are the
//             first down_ptr[level_ptr[staged]] edges, one contiguous run).
//   the rest  a level per grid step, the grid resident, a software grid barrier between steps
//             (sssp_grid_sync); pdist is read past L1 (another block wrote it).
// Each node's key is written as near-far leaves it (sssp_nf_finish: the distance, no predecessor
// yet), so the engine's tree pass (sssp_nf_tree) and result pass read a PHAST solve as they read
// a near-far one; ctrl[PHASE] = levels + 1 (the engine reports levels as the steps) and
// ctrl[DONE] = 1 at the end. Seeds of the rest's positions go through seed_val / seed_gen (the
// solve's generation number marks this solve's seeds: no clearing between solves).
// Integer distances only (the hierarchy's shortcut weights are exact integer sums); a sum is
// taken in 64 bits, so a 32-bit distance plus a heavy shortcut cannot wrap.
#define SSSP_PH_ARGS                                                                              \
    sssp_key_t *key, unsigned int *ctrl, const int *__restrict__ order,                          \
        const int *__restrict__ level_ptr, const long long *__restrict__ down_ptr,               \
        const int *__restrict__ down_pos, const sssp_d_t *__restrict__ down_w, sssp_d_t *pdist,   \
        unsigned int *seed_gen, sssp_d_t *seed_val, const int *__restrict__ seed_pos,             \
        const sssp_d_t *__restrict__ seed_d, int nseeds, unsigned int gen, int levels, int small,  \
        int staged, int width

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

// The least of `best` and, over p's downward in-edges lane, lane + lanes, ..., the tail's distance
// plus the weight. A lane has four edges' loads in flight before it reads their tails' distances.
// Edges, row offsets and tails come from global memory (kStaged: from the shared-memory copies
// `ptr`, `pos`, `w`, by the same indices); the tails' distances from `dist` (shared memory at the
// top, pdist past L1 below it: kShared).
template <bool kShared, bool kStaged, typename P>
__device__ __forceinline__ sssp_d_t sssp_ph_pull(const P *__restrict__ ptr, const int *__restrict__ pos,
                                                 const sssp_d_t *__restrict__ w, const sssp_d_t *dist, long long p,
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
#pragma unroll
        for (int k = 0; k < 4; ++k) {
            if (u[k] >= 0) {
                const sssp_d_t du = kShared ? dist[u[k]] : sssp_ldcg(dist + u[k]);
                if (du != (sssp_d_t)SSSP_INF_BITS) {
                    const unsigned long long t = (unsigned long long)du + (unsigned long long)c[k];
                    if (t < (unsigned long long)best) best = (sssp_d_t)t;
                }
            }
        }
    }
    return best;
}

extern "C" __global__ void __launch_bounds__(1024) sssp_ph_sweep(SSSP_PH_ARGS) {
    extern __shared__ __align__(16) unsigned char sssp_ph_smem[];
    sssp_d_t *sd = reinterpret_cast<sssp_d_t *>(sssp_ph_smem);
    const int top = level_ptr[small];
    if (blockIdx.x == 0) {
        // Shared memory: the top's distances, then the staged edges' weights, their row offsets
        // and their tails (the distance type first, for its alignment).
        const int pst = level_ptr[staged];
        const int est = (int)down_ptr[pst];
        sssp_d_t *sw = sd + top;
        int *sptr = reinterpret_cast<int *>(sw + est);
        int *spos = sptr + pst + 1;
        for (int p = threadIdx.x; p < top; p += blockDim.x) sd[p] = (sssp_d_t)SSSP_INF_BITS;
        for (int j = threadIdx.x; j < est; j += blockDim.x) {
            sw[j] = __ldg(down_w + j);
            spos[j] = __ldg(down_pos + j);
        }
        for (int p = threadIdx.x; p <= pst; p += blockDim.x) sptr[p] = (int)__ldg(down_ptr + p);
        sssp_block_sync();
        for (int i = threadIdx.x; i < nseeds; i += blockDim.x) {
            const int p = seed_pos[i];
            if (p < top) {
                sd[p] = seed_d[i];
            } else {  // read by the grid after its barrier (which fences)
                seed_val[p] = seed_d[i];
                seed_gen[p] = gen;
            }
        }
        sssp_block_sync();
        // A level in passes of blockDim / lanes nodes (block-uniform, so whole warps shuffle).
        for (int l = 0; l < small; ++l) {
            const int b = level_ptr[l], e = level_ptr[l + 1];
            const int lanes = sssp_ph_lanes(e - b, blockDim.x, width);
            const int lane = threadIdx.x & (lanes - 1), per = blockDim.x / lanes;
            for (int base = b; base < e; base += per) {
                const int p = base + threadIdx.x / lanes;
                sssp_d_t best = (sssp_d_t)SSSP_INF_BITS;
                if (p < e) {
                    best = l < staged ? sssp_ph_pull<true, true>(sptr, spos, sw, sd, p, lane, lanes, sd[p])
                                      : sssp_ph_pull<true, false>(down_ptr, down_pos, down_w, sd, p, lane, lanes, sd[p]);
                }
                best = sssp_ph_group_min(best, lanes);
                if (p < e && lane == 0) sd[p] = best;
            }
            sssp_block_sync();
        }
        for (int p = threadIdx.x; p < top; p += blockDim.x) {
            pdist[p] = sd[p];
            key[__ldg(order + p)] = sssp_ph_key(sd[p]);
        }
    }
    if (small < levels) {
        if (!sssp_grid_sync(ctrl)) return;
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
                    best = sssp_ph_pull<false, false>(down_ptr, down_pos, down_w, pdist, p, lane, lanes, best);
                }
                best = sssp_ph_group_min(best, lanes);
                if (p < e && lane == 0) {
                    pdist[p] = best;
                    key[__ldg(order + p)] = sssp_ph_key(best);
                }
            }
            if (l + 1 < levels && !sssp_grid_sync(ctrl)) return;
        }
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        ctrl[SSSP_CTRL_PHASE] = (unsigned int)levels + 1u;
        ctrl[SSSP_CTRL_DONE] = 1u;
    }
}
#endif
