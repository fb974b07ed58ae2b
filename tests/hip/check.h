// Shared by the HIP corpus: every program checks its results against a CPU
// reference and exits 0 only when they match.
#pragma once
#include <hip/hip_runtime.h>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#define HIP_CHECK(call)                                                         \
    do {                                                                        \
        hipError_t err_ = (call);                                               \
        if (err_ != hipSuccess) {                                               \
            std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__,  \
                         #call, hipGetErrorString(err_));                       \
            std::exit(1);                                                       \
        }                                                                       \
    } while (0)

#define EXPECT(cond, ...)                                                       \
    do {                                                                        \
        if (!(cond)) {                                                          \
            std::fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__,         \
                         __LINE__, #cond);                                      \
            std::fprintf(stderr, __VA_ARGS__);                                  \
            std::fprintf(stderr, "\n");                                         \
            std::exit(1);                                                       \
        }                                                                       \
    } while (0)

// A deterministic pseudo-random sequence (no libc rand state involved).
static inline unsigned next_random(unsigned* state) {
    *state = *state * 1664525u + 1013904223u;
    return *state >> 8;
}

static inline bool close_enough(double got, double want, double rel) {
    return std::fabs(got - want) <= rel * (1.0 + std::fabs(want));
}
