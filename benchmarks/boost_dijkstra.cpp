// CPU anchor for the benchmarks: the Boost Graph Library's Dijkstra (the paper's CPU baseline),
// one thread, dijkstra_shortest_paths_no_color_map on a compressed_sparse_row_graph.
//
// Reads a graph in the project's raw CSR dump (benchmarks/anchors.py, write_csr_dump):
//   int64 n, int64 m, int64 indptr[n+1], int32 indices[m], int64 weights[m]
// and a list of sources; runs Dijkstra (distances and predecessors) from each, printing one line
// per source: "source seconds checksum", where checksum is the sum of the finite distances (so
// the caller can check the answer against its own). Then "weight_bits B" (32 when every
// distance fits in int32, else 64), "rss_after_build_kb K" and "maxrss_kb K".
// Build: scripts/build_anchors.sh OUTDIR (g++ -O3 -march=x86-64-v3 -static).
#include <boost/graph/compressed_sparse_row_graph.hpp>
#include <boost/graph/dijkstra_shortest_paths_no_color_map.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <sys/resource.h>
#include <vector>

struct Dump {
    int64_t n = 0, m = 0;
    std::vector<int64_t> indptr;
    std::vector<int32_t> indices;
    std::vector<int64_t> weights;
};

static void read_exact(FILE *f, void *dst, size_t bytes, const char *path, const char *what) {
    if (fread(dst, 1, bytes, f) != bytes) {
        std::fprintf(stderr, "boost_dijkstra: %s: truncated input while reading %s\n", path, what);
        std::exit(2);
    }
}

static Dump read_dump(const char *path) {
    FILE *f = std::fopen(path, "rb");
    if (!f) {
        std::perror(path);
        std::exit(2);
    }
    Dump d;
    read_exact(f, &d.n, 8, path, "n");
    read_exact(f, &d.m, 8, path, "m");
    if (d.n < 1 || d.n > (int64_t)std::numeric_limits<uint32_t>::max() || d.m < 0) {
        std::fprintf(stderr, "boost_dijkstra: %s: bad header n=%lld m=%lld\n", path, (long long)d.n, (long long)d.m);
        std::exit(2);
    }
    d.indptr.resize(d.n + 1);
    d.indices.resize(d.m);
    d.weights.resize(d.m);
    read_exact(f, d.indptr.data(), 8 * (d.n + 1), path, "indptr");
    read_exact(f, d.indices.data(), 4 * d.m, path, "indices");
    read_exact(f, d.weights.data(), 8 * d.m, path, "weights");
    std::fclose(f);
    if (d.indptr[0] != 0 || d.indptr[d.n] != d.m) {
        std::fprintf(stderr, "boost_dijkstra: %s: indptr does not span [0, m]\n", path);
        std::exit(2);
    }
    return d;
}

static long resident_kb() {
    long pages = 0, size = 0;
    if (FILE *st = std::fopen("/proc/self/statm", "r")) {
        if (std::fscanf(st, "%ld %ld", &size, &pages) != 2) pages = 0;
        std::fclose(st);
    }
    return pages * 4;
}

// W: weight and distance type; E: edge index type. The smallest types that hold the graph keep
// Boost's working set (and so its cache behaviour) as lean as a practitioner would make it.
template <typename W, typename E>
static void run(Dump d, int nsources, char **sources) {
    using Graph = boost::compressed_sparse_row_graph<boost::directedS, boost::no_property,
                                                     boost::property<boost::edge_weight_t, W>,
                                                     boost::no_property, uint32_t, E>;
    const int64_t n = d.n;
    std::vector<std::pair<uint32_t, uint32_t>> edges;
    edges.reserve(d.m);
    std::vector<W> w(d.weights.begin(), d.weights.end());
    for (int64_t u = 0; u < n; ++u)
        for (int64_t e = d.indptr[u]; e < d.indptr[u + 1]; ++e) edges.emplace_back((uint32_t)u, (uint32_t)d.indices[e]);
    d = Dump();  // free the input before the graph is built
    Graph g(boost::edges_are_sorted, edges.begin(), edges.end(), w.begin(), (uint32_t)n);
    std::vector<std::pair<uint32_t, uint32_t>>().swap(edges);
    std::vector<W>().swap(w);

    std::vector<W> dist(n);
    std::vector<uint32_t> pred(n);
    // Resident memory once the graph is built and the input copies are freed: the working set
    // Dijkstra needs (CSR graph, distance and predecessor maps), comparable with GPU memory.
    const long rss_kb = resident_kb();
    const W inf = std::numeric_limits<W>::max();
    auto index = boost::get(boost::vertex_index, g);
    for (int a = 0; a < nsources; ++a) {
        const long long s = std::atoll(sources[a]);
        if (s < 0 || s >= n) {
            std::fprintf(stderr, "boost_dijkstra: source %s is out of range [0, %lld)\n", sources[a], (long long)n);
            std::exit(2);
        }
        auto t0 = std::chrono::steady_clock::now();
        boost::dijkstra_shortest_paths_no_color_map(
            g, (uint32_t)s,
            boost::predecessor_map(boost::make_iterator_property_map(pred.begin(), index))
                .distance_map(boost::make_iterator_property_map(dist.begin(), index))
                .distance_inf(inf));
        auto t1 = std::chrono::steady_clock::now();
        int64_t checksum = 0;
        for (int64_t v = 0; v < n; ++v)
            if (dist[v] != inf) checksum += (int64_t)dist[v];
        std::printf("%lld %.9f %lld\n", s, std::chrono::duration<double>(t1 - t0).count(), (long long)checksum);
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    std::printf("weight_bits %d\n", (int)(8 * sizeof(W)));
    std::printf("rss_after_build_kb %ld\n", rss_kb);
    std::printf("maxrss_kb %ld\n", ru.ru_maxrss);
}

int main(int argc, char **argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: boost_dijkstra GRAPH.bin SOURCE...\n");
        return 2;
    }
    Dump d = read_dump(argv[1]);
    int64_t max_w = 0;
    for (int64_t x : d.weights) {
        if (x < 0) {
            std::fprintf(stderr, "boost_dijkstra: %s: negative weight %lld\n", argv[1], (long long)x);
            return 2;
        }
        if (x > max_w) max_w = x;
    }
    // 32-bit distances only when no shortest path can overflow them: (n - 1) * max_w < 2^31 - 1
    // (the maximum itself is the "infinity" sentinel).
    const bool w32 = (__int128)(d.n - 1) * max_w < (__int128)std::numeric_limits<int32_t>::max();
    const bool e32 = d.m < (int64_t)std::numeric_limits<uint32_t>::max();
    if (w32 && e32) run<int32_t, uint32_t>(std::move(d), argc - 2, argv + 2);
    else if (w32) run<int32_t, uint64_t>(std::move(d), argc - 2, argv + 2);
    else if (e32) run<int64_t, uint32_t>(std::move(d), argc - 2, argv + 2);
    else run<int64_t, uint64_t>(std::move(d), argc - 2, argv + 2);
    return 0;
}
