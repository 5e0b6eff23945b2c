// The result pass: one launch after a solve's last kernel turns the solver's distance words into
// what the user receives, and writes it straight into page-locked host memory (the host maps
// its result arrays into the device's address space), so the host neither decodes nor copies.
// Compiled after sssp_contract.cuh (kernels.SOURCE_PARTS), whose sizes and word layouts come
// from the Python contract.
//
//   dist[v]  the distance in the caller's dtype (out_kind, SSSP_OUT_*): int64 with
//            SSSP_UNREACHABLE_I64 or int32 with SSSP_UNREACHABLE_I32 for an unreached node (integer
//            weights), float64 or float32 with +inf for it (any weights)
//   pred[v]  int32: the predecessor, -1 (SSSP_NO_PRED read as int32) for the source and
//            unreached nodes; pred is null when the caller asked for no tree
//            With tree_ptr not null (integer layouts only) the pass finds each node's
//            predecessor itself, from the node's incoming edges (tree_ptr, tree_src, tree_w: the
//            reverse graph's CSR, weights of tree_w_bytes 4 or 8 unsigned): the smallest u with
//            d(u) < d(v) and d(u) + w(u, v) == d(v), the push tree passes' rule, so a solver whose
//            last kernel wrote every distance needs neither a tree pass nor a cleared pred
//   info     the summary (SSSP_RES_*): the control words, near-far's counters or the phase
//            history reduced, the reached nodes, and the reached nodes other than the source
//            without a predecessor (near-far's flat parents, completed on the host)
//
// Counts go through a small device scratch (two running sums and a block ticket): mapped host
// memory is written once per element, never with atomics, which would cross the bus per update.
// The last block to take a ticket writes the summary and clears the scratch for the next solve.

__device__ __forceinline__ unsigned long long sssp_res_sum(unsigned long long v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xFFFFFFFFu, v, o);
    return v;
}

__device__ __forceinline__ unsigned int sssp_res_max(unsigned int v) {
    for (int o = 16; o > 0; o >>= 1) v = max(v, __shfl_down_sync(0xFFFFFFFFu, v, o));
    return v;
}

// Sums (and the maximum of) one value per thread over the block; thread 0 gets the results.
__device__ __forceinline__ void sssp_res_block(unsigned long long &a, unsigned long long &b, unsigned int &c) {
    __shared__ unsigned long long s_a[SSSP_RES_BLOCK / 32], s_b[SSSP_RES_BLOCK / 32];
    __shared__ unsigned int s_c[SSSP_RES_BLOCK / 32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    a = sssp_res_sum(a);
    b = sssp_res_sum(b);
    c = sssp_res_max(c);
    if (lane == 0) {
        s_a[warp] = a;
        s_b[warp] = b;
        s_c[warp] = c;
    }
    __syncthreads();
    if (warp == 0) {
        const bool in = lane < (int)(blockDim.x >> 5);
        a = sssp_res_sum(in ? s_a[lane] : 0ull);
        b = sssp_res_sum(in ? s_b[lane] : 0ull);
        c = sssp_res_max(in ? s_c[lane] : 0u);
    }
    __syncthreads();  // the shared slots are reused by the next call
}

__device__ __forceinline__ void sssp_res_store64(unsigned int *info, int word, unsigned long long v) {
    info[word] = (unsigned int)v;
    info[word + 1] = (unsigned int)(v >> 32);
}

// The pull form of the predecessor rule for node v at distance dv (see the header). Four edges a
// round: their tails and weights, then the tails' keys, are loaded before any is compared, so a
// row of d edges waits for about d / 4 pairs of dependent loads, not d.
__device__ __forceinline__ unsigned int sssp_res_pull(const unsigned long long *__restrict__ key,
                                                      const long long *__restrict__ ptr,
                                                      const int *__restrict__ src, const void *__restrict__ w,
                                                      int w_bytes, int layout, int v, unsigned long long dv) {
    unsigned int best = SSSP_NO_PRED;
    const long long end = ptr[v + 1];
    for (long long e = ptr[v]; e < end; e += 4) {
        int u[4];
        unsigned long long we[4], k[4];
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const bool in = e + j < end;
            u[j] = in ? src[e + j] : -1;
            we[j] = !in               ? 0ull
                    : w_bytes == 8    ? ((const unsigned long long *)w)[e + j]
                                      : (unsigned long long)((const unsigned int *)w)[e + j];
        }
#pragma unroll
        for (int j = 0; j < 4; ++j) k[j] = u[j] >= 0 ? key[u[j]] : 0xFFFFFFFFFFFFFFFFull;  // none: unreached
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            unsigned long long du;
            if (layout == SSSP_RES_PACKED) {
                du = k[j] >> 32;
                if (du == 0xFFFFFFFFull) continue;
            } else {
                du = k[j];
                if (du == 0xFFFFFFFFFFFFFFFFull) continue;
            }
            if (du < dv && du + we[j] == dv) best = min(best, (unsigned int)u[j]);  // both below 2^63: no wrap
        }
    }
    return best;
}

extern "C" __global__ void __launch_bounds__(SSSP_RES_BLOCK)
sssp_result(const unsigned long long *__restrict__ key, const unsigned int *__restrict__ pred_in,
            const unsigned int *__restrict__ cnt, const unsigned int *__restrict__ ctrl,
            void *__restrict__ dist, int *__restrict__ pred, unsigned int *__restrict__ info,
            unsigned long long *scratch, int n, int source, int layout, int counters, int history_len,
            int out_kind, const long long *__restrict__ tree_ptr, const int *__restrict__ tree_src,
            const void *__restrict__ tree_w, int tree_w_bytes) {
    unsigned long long reached = 0, flat = 0;
    unsigned int unused = 0;
    for (int v = blockIdx.x * blockDim.x + threadIdx.x; v < n; v += gridDim.x * blockDim.x) {
        const unsigned long long k = key[v];
        bool r;
        long long d;
        unsigned int p = SSSP_NO_PRED;
        if (layout == SSSP_RES_PACKED) {
            const unsigned int hi = (unsigned int)(k >> 32);
            r = hi != 0xFFFFFFFFu;
            d = r ? (long long)hi : SSSP_UNREACHABLE_I64;
            p = (unsigned int)k;
        } else if (layout == SSSP_RES_U64) {
            r = k != 0xFFFFFFFFFFFFFFFFull;
            d = r ? (long long)k : SSSP_UNREACHABLE_I64;
        } else {
            r = k != 0x7FF0000000000000ull;
            d = (long long)k;
        }
        if (out_kind == SSSP_OUT_I64) {
            ((long long *)dist)[v] = d;
        } else if (out_kind == SSSP_OUT_I32) {  // the host checked that every distance fits
            ((int *)dist)[v] = r ? (int)d : SSSP_UNREACHABLE_I32;
        } else {
            const double x = layout == SSSP_RES_F64 ? __longlong_as_double(d) : r ? (double)d : __longlong_as_double(0x7FF0000000000000ll);
            if (out_kind == SSSP_OUT_F64) ((double *)dist)[v] = x;
            else ((float *)dist)[v] = (float)x;
        }
        if (pred != nullptr) {
            if (tree_ptr != nullptr) p = r ? sssp_res_pull(key, tree_ptr, tree_src, tree_w, tree_w_bytes, layout, v, (unsigned long long)d) : SSSP_NO_PRED;
            else if (layout != SSSP_RES_PACKED) p = pred_in[v];
            if (!r) p = SSSP_NO_PRED;
            pred[v] = (int)p;
            flat += (r && p == SSSP_NO_PRED && v != source) ? 1ull : 0ull;
        }
        reached += r ? 1ull : 0ull;
    }
    sssp_res_block(reached, flat, unused);
    __shared__ bool s_last;
    if (threadIdx.x == 0) {
        atomicAdd(scratch, reached);
        atomicAdd(scratch + 1, flat);
        __threadfence();
        s_last = atomicAdd(scratch + 2, 1ull) == (unsigned long long)(gridDim.x - 1);
    }
    __syncthreads();
    if (!s_last) return;

    // The last block: every other block's counts are in the scratch (fenced before its ticket).
    const int t = threadIdx.x;
    if (t < SSSP_CTRL_WORDS) info[SSSP_RES_CTRL + t] = ctrl[t];
    if (counters == SSSP_RES_COUNTERS_NEARFAR) {
        if (t < SSSP_NF_WORDS) info[SSSP_RES_NF + t] = cnt[t];
    } else {
        // cnt[2p] = |F_p|, cnt[2p+1] = |R_p| for the phases 0..last (the control word holds last + 1).
        const int entries = history_len / 2;
        const int last = min(max((int)ctrl[SSSP_CTRL_PHASE] - 1, 0), entries - 1);
        unsigned long long frontier = 0, fringe = 0;
        unsigned int largest = 0;
        for (int p = t; p <= last; p += blockDim.x) {
            const unsigned int f = cnt[2 * (long long)p];
            frontier += f;
            largest = max(largest, f);
            if (p >= 1) fringe += cnt[2 * (long long)p + 1];
        }
        sssp_res_block(frontier, fringe, largest);
        if (t == 0) {
            sssp_res_store64(info, SSSP_RES_FRONTIER_SUM, frontier);
            info[SSSP_RES_FRONTIER_MAX] = largest;
            sssp_res_store64(info, SSSP_RES_FRINGE_SUM, fringe);
        }
    }
    if (t == 0) {
        volatile unsigned long long *s = scratch;
        sssp_res_store64(info, SSSP_RES_REACHED, s[0]);
        sssp_res_store64(info, SSSP_RES_FLAT, s[1]);
        for (unsigned int i = 0; i < SSSP_RES_SCRATCH_WORDS; ++i) s[i] = 0ull;
    }
}
