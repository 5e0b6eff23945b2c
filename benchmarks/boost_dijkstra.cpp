// CPU anchor for the benchmarks: the Boost Graph Library's Dijkstra (the paper's CPU baseline).
//
// Reads a graph in the project's raw CSR dump (written by benchmarks/bench_gpu.py):
//   int64 n, int64 m, int64 indptr[n+1], int32 indices[m], int64 weights[m]
// and a list of sources; runs dijkstra_shortest_paths (distances and predecessors) from each,
// printing one line per source: "source seconds checksum", where checksum is the sum of the
// finite distances (so the caller can check the answer against its own).
// Build: g++ -O3 -march=x86-64-v3 -static -o boost_dijkstra boost_dijkstra.cpp
#include <boost/graph/compressed_sparse_row_graph.hpp>
#include <boost/graph/dijkstra_shortest_paths.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <sys/resource.h>
#include <vector>

using Graph = boost::compressed_sparse_row_graph<boost::directedS, boost::no_property,
                                                 boost::property<boost::edge_weight_t, int64_t>,
                                                 boost::no_property, uint32_t, uint64_t>;

static void read_exact(FILE *f, void *dst, size_t bytes, const char *what) {
    if (fread(dst, 1, bytes, f) != bytes) {
        std::fprintf(stderr, "boost_dijkstra: truncated input while reading %s\n", what);
        std::exit(2);
    }
}

int main(int argc, char **argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: boost_dijkstra GRAPH.bin SOURCE...\n");
        return 2;
    }
    FILE *f = std::fopen(argv[1], "rb");
    if (!f) {
        std::perror(argv[1]);
        return 2;
    }
    int64_t n = 0, m = 0;
    read_exact(f, &n, 8, "n");
    read_exact(f, &m, 8, "m");
    std::vector<int64_t> indptr(n + 1);
    std::vector<int32_t> indices(m);
    std::vector<int64_t> weights(m);
    read_exact(f, indptr.data(), 8 * (n + 1), "indptr");
    read_exact(f, indices.data(), 4 * m, "indices");
    read_exact(f, weights.data(), 8 * m, "weights");
    std::fclose(f);

    std::vector<std::pair<uint32_t, uint32_t>> edges;
    edges.reserve(m);
    for (int64_t u = 0; u < n; ++u)
        for (int64_t e = indptr[u]; e < indptr[u + 1]; ++e) edges.emplace_back((uint32_t)u, (uint32_t)indices[e]);
    Graph g(boost::edges_are_sorted, edges.begin(), edges.end(), weights.begin(), (uint32_t)n);
    std::vector<std::pair<uint32_t, uint32_t>>().swap(edges);
    std::vector<int32_t>().swap(indices);
    std::vector<int64_t>().swap(weights);
    std::vector<int64_t>().swap(indptr);

    std::vector<int64_t> dist(n);
    std::vector<uint32_t> pred(n);
    long rss_pages = 0, dummy = 0;
    if (FILE *st = std::fopen("/proc/self/statm", "r")) {
        if (std::fscanf(st, "%ld %ld", &dummy, &rss_pages) != 2) rss_pages = 0;
        std::fclose(st);
    }
    for (int a = 2; a < argc; ++a) {
        const uint32_t s = (uint32_t)std::atol(argv[a]);
        auto t0 = std::chrono::steady_clock::now();
        boost::dijkstra_shortest_paths(
            g, s,
            boost::predecessor_map(boost::make_iterator_property_map(pred.begin(), boost::get(boost::vertex_index, g)))
                .distance_map(boost::make_iterator_property_map(dist.begin(), boost::get(boost::vertex_index, g)))
                .distance_inf(std::numeric_limits<int64_t>::max()));
        auto t1 = std::chrono::steady_clock::now();
        int64_t checksum = 0;
        for (int64_t v = 0; v < n; ++v)
            if (dist[v] != std::numeric_limits<int64_t>::max()) checksum += dist[v];
        std::printf("%u %.9f %lld\n", s, std::chrono::duration<double>(t1 - t0).count(), (long long)checksum);
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    std::printf("maxrss_kb %ld\n", ru.ru_maxrss);
    // Resident memory once the graph is built and the input copies are freed: the working set
    // Dijkstra needs (CSR graph, distance and predecessor maps), comparable with GPU memory.
    std::printf("rss_after_build_kb %ld\n", rss_pages * 4);
    return 0;
}
