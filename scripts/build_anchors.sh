#!/usr/bin/env bash
# Build the CPU anchors of benchmarks/bench_sssp.py as static binaries that can be carried to a
# GPU host without Boost headers, a compiler or network:
#
#   bash scripts/build_anchors.sh OUTDIR [GAP_CHECKOUT]
#
#   OUTDIR/boost_dijkstra   benchmarks/boost_dijkstra.cpp (needs the Boost Graph headers,
#                           e.g. `apt-get install libboost-graph-dev`)
#   OUTDIR/gap_sssp         the GAP benchmark suite's delta-stepping sssp, from a checkout of
#                           https://github.com/sbeamer/gapbs (never copied into this repository)
#   OUTDIR/gap_converter    GAP's converter, which writes GAP's own synthetic graphs (Kronecker
#                           -g, uniform random -u, weighted -w) as .wsg files
#   OUTDIR/BUILD_INFO.txt   compiler, flags, Boost version and the GAP commit
#
# -march=x86-64-v3 (AVX2) rather than -march=native: the binaries must run on another host.
set -euo pipefail
if [[ $# -lt 1 || $# -gt 2 ]]; then
  echo "usage: bash scripts/build_anchors.sh OUTDIR [GAP_CHECKOUT]" >&2
  exit 2
fi
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=$1
gap=${2:-}
CXX=${CXX:-g++}
FLAGS=(-O3 -march=x86-64-v3 -static)
mkdir -p "$out"
info="$out/BUILD_INFO.txt"
{
  echo "built: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -m)"
  echo "compiler: $("$CXX" --version | head -n1)"
  echo "flags: ${FLAGS[*]}"
} >"$info"

header=/usr/include/boost/graph/dijkstra_shortest_paths_no_color_map.hpp
if [[ ! -f $header ]]; then
  echo "build_anchors: $header not found: install the Boost Graph headers (libboost-graph-dev)" >&2
  exit 1
fi
"$CXX" "${FLAGS[@]}" -std=c++17 -o "$out/boost_dijkstra" "$root/benchmarks/boost_dijkstra.cpp"
boost_version=$(sed -n 's/^#define BOOST_LIB_VERSION "\(.*\)"/\1/p' /usr/include/boost/version.hpp)
src_sha=$(sha256sum "$root/benchmarks/boost_dijkstra.cpp" | cut -c1-16)
echo "boost_dijkstra: Boost $boost_version, benchmarks/boost_dijkstra.cpp sha256 $src_sha" >>"$info"
echo "build_anchors: built $out/boost_dijkstra" >&2

if [[ -n $gap ]]; then
  if [[ ! -f $gap/src/sssp.cc ]]; then
    echo "build_anchors: $gap/src/sssp.cc not found: GAP_CHECKOUT must be a gapbs checkout" >&2
    exit 1
  fi
  # GAP's own Makefile flags (-std=c++11 -O3 -Wall -fopenmp) plus a static link. The linker warns
  # that libgomp's offloading plugin loader uses dlopen; sssp never offloads, so it is never hit.
  "$CXX" "${FLAGS[@]}" -std=c++11 -Wall -fopenmp -o "$out/gap_sssp" "$gap/src/sssp.cc"
  "$CXX" "${FLAGS[@]}" -std=c++11 -Wall -fopenmp -o "$out/gap_converter" "$gap/src/converter.cc"
  commit=$(git -C "$gap" rev-parse HEAD 2>/dev/null || echo unknown)
  echo "gap_sssp: gapbs $commit src/sssp.cc (-fopenmp)" >>"$info"
  echo "gap_converter: gapbs $commit src/converter.cc (-fopenmp)" >>"$info"
  echo "build_anchors: built $out/gap_sssp and $out/gap_converter" >&2
fi
