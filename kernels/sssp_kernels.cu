// Crauser's parallel Dijkstra (and Martín's variant) as relax / min / update CUDA kernels.
//
// One thread (or, for relax and the tree pass, SSSP_RELAX_LANES consecutive threads) per node.
// Node state is one int32 per node, `settled_at`: the iteration that settled the node, or
// SSSP_UNSETTLED. It replaces the paper's two boolean vectors U and F: a node is unsettled when
// settled_at == SSSP_UNSETTLED and is in the frontier of iteration i when settled_at == i - 1.
// That saves the update kernel a write of F for every node, and the iteration numbers give an
// acyclic predecessor tree afterwards (a predecessor is always settled strictly earlier).
//
// Compile-time parameters (all prefixed SSSP_ so they cannot collide with code or with the
// #defines Kernel Tuner inserts):
//   SSSP_DIST_BITS     32 or 64: distance width; the host picks 32 only when n * max_weight fits.
//   SSSP_WEIGHT_BITS   32 or 64: edge-weight width on the device.
//   SSSP_CRAUSER       1: OUT criterion, delta = min(dist + omega); 0: Martín, delta = min(dist).
//   SSSP_RELAX_LANES   1, 2, 4, 8, 16 or 32 threads per node in relax and in the tree pass.
// Launch-time settings (block size, L1/shared carveout) are not compiled in.

#ifndef SSSP_DIST_BITS
#define SSSP_DIST_BITS 32
#endif
#ifndef SSSP_WEIGHT_BITS
#define SSSP_WEIGHT_BITS 32
#endif
#ifndef SSSP_CRAUSER
#define SSSP_CRAUSER 1
#endif
#ifndef SSSP_RELAX_LANES
#define SSSP_RELAX_LANES 1
#endif

#if SSSP_DIST_BITS == 32
typedef unsigned int sssp_dist_t;
#define SSSP_INF 0xFFFFFFFFu
#elif SSSP_DIST_BITS == 64
typedef unsigned long long sssp_dist_t;
#define SSSP_INF 0xFFFFFFFFFFFFFFFFull
#else
#error "SSSP_DIST_BITS must be 32 or 64"
#endif

#if SSSP_WEIGHT_BITS == 32
typedef unsigned int sssp_weight_t;
#elif SSSP_WEIGHT_BITS == 64
typedef unsigned long long sssp_weight_t;
#else
#error "SSSP_WEIGHT_BITS must be 32 or 64"
#endif

#if SSSP_WEIGHT_BITS > SSSP_DIST_BITS
#error "SSSP_WEIGHT_BITS cannot exceed SSSP_DIST_BITS"
#endif

#if (SSSP_RELAX_LANES & (SSSP_RELAX_LANES - 1)) != 0 || SSSP_RELAX_LANES < 1 || SSSP_RELAX_LANES > 32
#error "SSSP_RELAX_LANES must be a power of two in [1, 32]"
#endif

#define SSSP_UNSETTLED 0x7FFFFFFF
#define SSSP_FULL_MASK 0xFFFFFFFFu

__device__ __forceinline__ sssp_dist_t sssp_min2(sssp_dist_t a, sssp_dist_t b) { return a < b ? a : b; }

// Minimum over the SSSP_RELAX_LANES consecutive lanes that share a node. Every thread of the
// warp must call it (lane groups are aligned inside a warp because block sizes are multiples of 32).
__device__ __forceinline__ sssp_dist_t sssp_lane_min(sssp_dist_t v) {
#if SSSP_RELAX_LANES > 1
#pragma unroll
    for (int off = SSSP_RELAX_LANES / 2; off > 0; off >>= 1) {
        v = sssp_min2(v, __shfl_xor_sync(SSSP_FULL_MASK, v, off));
    }
#endif
    return v;
}

__device__ __forceinline__ int sssp_lane_min_int(int v) {
#if SSSP_RELAX_LANES > 1
#pragma unroll
    for (int off = SSSP_RELAX_LANES / 2; off > 0; off >>= 1) {
        v = min(v, __shfl_xor_sync(SSSP_FULL_MASK, v, off));
    }
#endif
    return v;
}

// relax, successors variant: frontier nodes push along their out-edges with atomicMin.
extern "C" __global__ void sssp_relax(const long long *__restrict__ indptr,
                                      const int *__restrict__ indices,
                                      const sssp_weight_t *__restrict__ weights,
                                      const int *__restrict__ settled_at,
                                      sssp_dist_t *dist, int n, int iter) {
    const long long gtid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long u = gtid / SSSP_RELAX_LANES;
    const int lane = (int)(gtid % SSSP_RELAX_LANES);
    if (u >= n || settled_at[u] != iter - 1) return;  // most threads: "dummy" threads
    const sssp_dist_t du = dist[u];
    const long long end = indptr[u + 1];
    for (long long e = indptr[u] + lane; e < end; e += SSSP_RELAX_LANES) {
        const int v = indices[e];
        if (settled_at[v] == SSSP_UNSETTLED) {
            const sssp_dist_t nd = du + (sssp_dist_t)weights[e];
            // A stale read can only be larger than the current value (distances only fall),
            // so this pre-check never skips a needed update; it saves most atomics.
            if (nd < dist[v]) atomicMin(&dist[v], nd);
        }
    }
}

// relax, predecessors variant: each unsettled node pulls from frontier predecessors over its
// incoming edges (the reverse graph). Only the node's own lanes write dist[v]: no atomics.
extern "C" __global__ void sssp_relax_pull(const long long *__restrict__ rindptr,
                                           const int *__restrict__ rindices,
                                           const sssp_weight_t *__restrict__ rweights,
                                           const int *__restrict__ settled_at,
                                           sssp_dist_t *dist, int n, int iter) {
    const long long gtid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long v = gtid / SSSP_RELAX_LANES;
    const int lane = (int)(gtid % SSSP_RELAX_LANES);
    sssp_dist_t best = SSSP_INF;
    if (v < n && settled_at[v] == SSSP_UNSETTLED) {
        const long long end = rindptr[v + 1];
        for (long long e = rindptr[v] + lane; e < end; e += SSSP_RELAX_LANES) {
            const int u = rindices[e];
            if (settled_at[u] == iter - 1) best = sssp_min2(best, dist[u] + (sssp_dist_t)rweights[e]);
        }
    }
    best = sssp_lane_min(best);  // no early return above: every lane reaches the shuffles
    if (lane == 0 && v < n && best < dist[v]) dist[v] = best;
}

// min: threshold of iteration `iter` over unsettled nodes, a shared-memory tree reduction in the
// style of the CUDA SDK's reduce4 (each thread folds two elements while loading; Crauser's omega
// is added during the load), for any block size that is a multiple of 32. Each block's minimum
// goes to delta_hist[iter] with one atomicMin, so no second launch and no host round trip is
// needed before update reads it. Needs blockDim.x * sizeof(sssp_dist_t) bytes of dynamic shared
// memory.
__device__ __forceinline__ sssp_dist_t sssp_key(const int *__restrict__ settled_at,
                                                const sssp_dist_t *__restrict__ dist,
                                                const sssp_dist_t *__restrict__ omega, long long v) {
    if (settled_at[v] != SSSP_UNSETTLED) return SSSP_INF;
    const sssp_dist_t d = dist[v];
#if SSSP_CRAUSER
    const sssp_dist_t w = omega[v];
    return (d == SSSP_INF || w == SSSP_INF) ? SSSP_INF : d + w;
#else
    return d;
#endif
}

extern "C" __global__ void sssp_min(const int *__restrict__ settled_at,
                                    const sssp_dist_t *__restrict__ dist,
                                    const sssp_dist_t *__restrict__ omega,
                                    sssp_dist_t *delta_hist, int n, int iter) {
    extern __shared__ unsigned char sssp_smem_raw[];
    sssp_dist_t *sdata = reinterpret_cast<sssp_dist_t *>(sssp_smem_raw);
    const unsigned int tid = threadIdx.x;
    const long long i = (long long)blockIdx.x * (blockDim.x * 2) + tid;
    sssp_dist_t m = SSSP_INF;
    if (i < n) m = sssp_key(settled_at, dist, omega, i);
    if (i + blockDim.x < n) m = sssp_min2(m, sssp_key(settled_at, dist, omega, i + blockDim.x));
    sdata[tid] = m;
    __syncthreads();
    // Tree over shared memory down to one warp; `s` starts at the largest power of two below
    // blockDim.x so non-power-of-two blocks (96, 192, 384, ...) reduce correctly.
    unsigned int s = 1u << (31 - __clz(blockDim.x - 1));
    for (; s >= 32; s >>= 1) {
        if (tid < s && tid + s < blockDim.x) sdata[tid] = sssp_min2(sdata[tid], sdata[tid + s]);
        __syncthreads();
    }
    if (tid < 32) {
        m = sdata[tid];
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) m = sssp_min2(m, __shfl_down_sync(SSSP_FULL_MASK, m, off));
        if (tid == 0 && m != SSSP_INF) atomicMin(&delta_hist[iter], m);
    }
}

// update: settle every unsettled node at or under the threshold (Crauser) or at it (Martín);
// settled nodes form the next frontier. Counts them per iteration for the divergence statistic.
extern "C" __global__ void sssp_update(int *settled_at, const sssp_dist_t *__restrict__ dist,
                                       const sssp_dist_t *__restrict__ delta_hist,
                                       unsigned int *settled_count, int n, int iter) {
    const long long v = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const sssp_dist_t delta = delta_hist[iter];
    int settle = 0;
    if (v < n && delta != SSSP_INF && settled_at[v] == SSSP_UNSETTLED) {
        const sssp_dist_t d = dist[v];
#if SSSP_CRAUSER
        settle = d <= delta;
#else
        settle = d == delta;
#endif
        if (settle) settled_at[v] = iter;
    }
    const int count = __syncthreads_count(settle);
    if (threadIdx.x == 0 && count) atomicAdd(&settled_count[iter], (unsigned int)count);
}

// Shortest-path tree, successors variant: pred[v] = the smallest settled u with
// dist[u] + w(u, v) == dist[v] that was settled strictly before v. pred starts at INT_MAX.
extern "C" __global__ void sssp_tree(const long long *__restrict__ indptr,
                                     const int *__restrict__ indices,
                                     const sssp_weight_t *__restrict__ weights,
                                     const int *__restrict__ settled_at,
                                     const sssp_dist_t *__restrict__ dist, int *pred, int n) {
    const long long gtid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long u = gtid / SSSP_RELAX_LANES;
    const int lane = (int)(gtid % SSSP_RELAX_LANES);
    if (u >= n) return;
    const int su = settled_at[u];
    if (su == SSSP_UNSETTLED) return;
    const sssp_dist_t du = dist[u];
    const long long end = indptr[u + 1];
    for (long long e = indptr[u] + lane; e < end; e += SSSP_RELAX_LANES) {
        const int v = indices[e];
        if (su < settled_at[v] && du + (sssp_dist_t)weights[e] == dist[v]) atomicMin(&pred[v], (int)u);
    }
}

// Shortest-path tree, predecessors variant: each reached node scans its incoming edges.
extern "C" __global__ void sssp_tree_pull(const long long *__restrict__ rindptr,
                                          const int *__restrict__ rindices,
                                          const sssp_weight_t *__restrict__ rweights,
                                          const int *__restrict__ settled_at,
                                          const sssp_dist_t *__restrict__ dist, int *pred, int n) {
    const long long gtid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long v = gtid / SSSP_RELAX_LANES;
    const int lane = (int)(gtid % SSSP_RELAX_LANES);
    int best = SSSP_UNSETTLED;
    if (v < n && dist[v] != SSSP_INF) {
        const int sv = settled_at[v];
        const sssp_dist_t dv = dist[v];
        const long long end = rindptr[v + 1];
        for (long long e = rindptr[v] + lane; e < end; e += SSSP_RELAX_LANES) {
            const int u = rindices[e];
            if (settled_at[u] < sv && dist[u] + (sssp_dist_t)rweights[e] == dv) best = min(best, u);
        }
    }
    best = sssp_lane_min_int(best);
    if (lane == 0 && v < n) pred[v] = best;
}
