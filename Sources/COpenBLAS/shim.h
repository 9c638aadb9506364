// OpenBLAS's CBLAS interface (cblas_sgemm, openblas_set_num_threads) for the benchmarks.
// The include path comes from `pkg-config openblas`.
#pragma once
#include <cblas.h>
