// hd.h — DPSCALE_HD: `__host__ __device__` under nvcc, nothing elsewhere. Arithmetic written
// once for both backends (models/elementwise.h, comm/grad_format.h) is marked with it.
#pragma once

#if defined(__CUDACC__)
#define DPSCALE_HD __host__ __device__
#else
#define DPSCALE_HD
#endif
