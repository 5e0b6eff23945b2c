// ---- PHAST: a contraction hierarchy's sweep, one dependent step per level ---------------------
// Delling, Goldberg, Nowatzyk and Werneck's PHAST (IPDPS 2011). The host builds a contraction
// hierarchy once per graph (sssp/hierarchy.py) and, per solve, runs the Dijkstra over the upward
// edges from the source (a few hundred nodes on a road network): its distances arrive as seeds
// (position, distance). This kernel sweeps the levels from the top: a node's distance is the
// least of its seed and, over its downward in-edges (u, v, w) from higher levels, u's distance
// plus w. The nodes of one level are independent, so a level is one step of the sweep, with no
// atomics (each node is written once, by one thread).
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
        int staged

#if !SSSP_FLOAT
__device__ __forceinline__ sssp_key_t sssp_ph_key(sssp_d_t d) {
#if SSSP_PACKED
    return ((sssp_key_t)d << 32) | (sssp_key_t)SSSP_NO_PRED;  // INF: every bit set (SSSP_KEY_INF)
#else
    return sssp_bits(d);
#endif
}

// The least of `best` and, over p's downward in-edges, the tail's distance plus the weight. The
// tails' distances come from `dist` (shared memory at the top, pdist past L1 below it).
template <bool kShared>
__device__ __forceinline__ sssp_d_t sssp_ph_pull(const long long *__restrict__ down_ptr, const int *__restrict__ down_pos,
                                                 const sssp_d_t *__restrict__ down_w, const sssp_d_t *dist, long long p,
                                                 sssp_d_t best) {
    const long long e = __ldg(down_ptr + p + 1);
    for (long long j = __ldg(down_ptr + p); j < e; ++j) {
        const int u = __ldg(down_pos + j);
        const sssp_d_t du = kShared ? dist[u] : sssp_ldcg(dist + u);
        if (du != (sssp_d_t)SSSP_INF_BITS) {
            const unsigned long long c = (unsigned long long)du + (unsigned long long)__ldg(down_w + j);
            if (c < (unsigned long long)best) best = (sssp_d_t)c;
        }
    }
    return best;
}

// The same pull over in-edges staged in shared memory (ptr, tails' positions, weights).
__device__ __forceinline__ sssp_d_t sssp_ph_pull_staged(const int *sptr, const int *spos, const sssp_d_t *sw,
                                                        const sssp_d_t *sd, int p, sssp_d_t best) {
    const int e = sptr[p + 1];
    for (int j = sptr[p]; j < e; ++j) {
        const sssp_d_t du = sd[spos[j]];
        if (du != (sssp_d_t)SSSP_INF_BITS) {
            const unsigned long long c = (unsigned long long)du + (unsigned long long)sw[j];
            if (c < (unsigned long long)best) best = (sssp_d_t)c;
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
        for (int l = 0; l < staged; ++l) {
            const int b = level_ptr[l], e = level_ptr[l + 1];
            for (int p = b + threadIdx.x; p < e; p += blockDim.x)
                sd[p] = sssp_ph_pull_staged(sptr, spos, sw, sd, p, sd[p]);
            sssp_block_sync();
        }
        for (int l = staged; l < small; ++l) {
            const int b = level_ptr[l], e = level_ptr[l + 1];
            for (int p = b + threadIdx.x; p < e; p += blockDim.x)
                sd[p] = sssp_ph_pull<true>(down_ptr, down_pos, down_w, sd, p, sd[p]);
            sssp_block_sync();
        }
        for (int p = threadIdx.x; p < top; p += blockDim.x) {
            pdist[p] = sd[p];
            key[__ldg(order + p)] = sssp_ph_key(sd[p]);
        }
    }
    if (small < levels) {
        if (!sssp_grid_sync(ctrl)) return;
        const long long stride = (long long)gridDim.x * blockDim.x;
        for (int l = small; l < levels; ++l) {
            const int e = level_ptr[l + 1];
            for (long long p = level_ptr[l] + (long long)blockIdx.x * blockDim.x + threadIdx.x; p < e; p += stride) {
                sssp_d_t best = sssp_ldcg(seed_gen + p) == gen ? sssp_ldcg(seed_val + p) : (sssp_d_t)SSSP_INF_BITS;
                best = sssp_ph_pull<false>(down_ptr, down_pos, down_w, pdist, p, best);
                pdist[p] = best;
                key[__ldg(order + p)] = sssp_ph_key(best);
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
