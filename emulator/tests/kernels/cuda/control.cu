// Control flow: divergence, data-dependent loops, switch, calls, the stack.
#include "../prlx_cuda.h"

extern "C" __global__ void divergent_branches(const int *in, int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int x = in[i], r;
  if (x % 3 == 0) {
    r = x * 7;
  } else if (x % 3 == 1) {
    r = 0;
    for (int k = 0; k < (x & 15); ++k) r += k * x;
  } else {
    r = -x;
    if (x & 4) r ^= 0x5a5a;
  }
  out[i] = r;
}

// Collatz step counts: each lane loops a data-dependent number of times.
extern "C" __global__ void collatz_steps(const uint *in, uint *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  u64 x = in[i];
  uint steps = 0;
  while (x > 1) {
    x = (x & 1) ? 3 * x + 1 : x / 2;
    ++steps;
  }
  out[i] = steps;
}

extern "C" __global__ void switch_stmt(const int *in, int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int x = in[i], r;
  switch (x & 15) {
  case 0: r = 11; break;
  case 1: r = x + 3; break;
  case 2: r = x * x; break;
  case 3: r = x << 4; break;
  case 5: r = ~x; break;
  case 7: r = x / 7; break;
  case 8: r = -x; // falls through
  case 9: r = x ^ 0x1234; break;
  case 13: r = 1300; break;
  default: r = x - 100; break;
  }
  out[i] = r;
}

__device__ __noinline__ int gcd(int a, int b) {
  while (b != 0) {
    int t = a % b;
    a = b;
    b = t;
  }
  return a;
}

__device__ __noinline__ uint fib(uint n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

__device__ __noinline__ u64 factorial(uint n) { return n <= 1 ? 1 : n * factorial(n - 1); }

extern "C" __global__ void device_calls(const int *a, const int *b, int *g, uint *f, u64 *fact, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  g[i] = gcd(a[i], b[i]);
  f[i] = fib(i % 16);
  fact[i] = factorial(i % 21);
}

// A dynamically indexed array lives in local memory (the stack).
extern "C" __global__ void local_array(const int *in, int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int arr[16];
  for (int k = 0; k < 16; ++k) arr[k] = in[i] * k + (k ^ i);
  int acc = 0;
  for (int k = 0; k < 16; ++k) acc += arr[(in[i] + k * 5) & 15] * (k + 1);
  arr[in[i] & 15] = acc;
  out[i] = arr[(i * 7) & 15] + acc;
}
