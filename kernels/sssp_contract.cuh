// Emitted from kernels/__init__.py (python -m kernels): the sizes and word layouts the
// kernels and the host share. Edit them there, never here; a test compares this file.
#ifndef SSSP_CONTRACT_CUH
#define SSSP_CONTRACT_CUH
#define SSSP_NO_PRED 0xFFFFFFFFu
#define SSSP_UNSETTLED 0x7FFFFFFF
#define SSSP_UNREACHABLE_I64 0x7FFFFFFFFFFFFFFFll
#define SSSP_CTRL_WORDS 16
#define SSSP_CTRL_PHASE 0
#define SSSP_CTRL_DONE 1
#define SSSP_CTRL_BUCKETS 4
#define SSSP_CTRL_ABORT 5
#define SSSP_CTRL_LIMIT 6
#define SSSP_CTRL_REACHED 8
#define SSSP_CTRL_SORTED 9
#define SSSP_NF_WORDS 16
#define SSSP_NF_MAXL 6
#define SSSP_NF_POPS 7
#define SSSP_NF_SUM 8
#define SSSP_RES_WORDS 48
#define SSSP_RES_CTRL 0
#define SSSP_RES_NF 16
#define SSSP_RES_REACHED 32
#define SSSP_RES_FLAT 34
#define SSSP_RES_FRONTIER_SUM 36
#define SSSP_RES_FRONTIER_MAX 38
#define SSSP_RES_FRINGE_SUM 40
#define SSSP_RES_PACKED 0
#define SSSP_RES_U64 1
#define SSSP_RES_F64 2
#define SSSP_UNREACHABLE_I32 0x7FFFFFFF
#define SSSP_OUT_I64 0
#define SSSP_OUT_I32 1
#define SSSP_OUT_F64 2
#define SSSP_OUT_F32 3
#define SSSP_RES_COUNTERS_NEARFAR 0
#define SSSP_RES_COUNTERS_PHASES 1
#define SSSP_RES_BLOCK 256
#define SSSP_RES_SCRATCH_WORDS 4
#endif
