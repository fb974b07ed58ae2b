/* Runs ticket_race (race.cu) once and prints what each thread chose.
 *
 *   race KERNELS.ptx
 *
 * A plain driver-API program (cuda.h, -lcuda), unaware of prlx. The input is
 * always the same; the output depends on the order in which threads reached
 * the atomic counter: run it twice (on a GPU, or on prlx's emulator with
 * PRLX_EMU_SCHEDULE=<seed>) and the printed choices may differ. */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>

#define BLOCKS 4
#define THREADS 64
#define N (BLOCKS * THREADS)
/* Not a multiple of 32: one warp's lanes straddle it whatever the order. */
#define THRESHOLD (N / 2 + 7)

#define CHECK(call)                                                              \
  do {                                                                           \
    CUresult r_ = (call);                                                        \
    if (r_ != CUDA_SUCCESS) {                                                    \
      const char *name_ = "?";                                                   \
      cuGetErrorName(r_, &name_);                                                \
      fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, name_); \
      exit(1);                                                                   \
    }                                                                            \
  } while (0)

static char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) { perror(path); exit(2); }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc(n + 1);
  if (!buf || fread(buf, 1, n, f) != (size_t)n) { perror(path); exit(2); }
  buf[n] = 0;
  fclose(f);
  return buf;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s KERNELS.ptx\n", argv[0]);
    return 2;
  }
  char *ptx = read_file(argv[1]);
  CUdevice dev;
  CUcontext ctx;
  CUmodule mod;
  CUfunction fn;
  CHECK(cuInit(0));
  CHECK(cuDeviceGet(&dev, 0));
  CHECK(cuCtxCreate(&ctx, 0, dev));
  CHECK(cuModuleLoadData(&mod, ptx));
  CHECK(cuModuleGetFunction(&fn, mod, "ticket_race"));

  int early[N], late[N], out[N];
  unsigned tickets[N];
  for (int i = 0; i < N; ++i) {
    early[i] = 1000 + i;
    late[i] = -1 - i;
  }
  CUdeviceptr d_counter, d_early, d_late, d_out, d_tickets;
  CHECK(cuMemAlloc(&d_counter, sizeof(unsigned)));
  CHECK(cuMemAlloc(&d_early, sizeof early));
  CHECK(cuMemAlloc(&d_late, sizeof late));
  CHECK(cuMemAlloc(&d_out, sizeof out));
  CHECK(cuMemAlloc(&d_tickets, sizeof tickets));
  CHECK(cuMemsetD32(d_counter, 0, 1));
  CHECK(cuMemcpyHtoD(d_early, early, sizeof early));
  CHECK(cuMemcpyHtoD(d_late, late, sizeof late));
  unsigned threshold = THRESHOLD;
  void *args[] = {&d_counter, &threshold, &d_early, &d_late, &d_out, &d_tickets};
  CHECK(cuLaunchKernel(fn, BLOCKS, 1, 1, THREADS, 1, 1, 0, 0, args, 0));
  CHECK(cuCtxSynchronize());
  CHECK(cuMemcpyDtoH(out, d_out, sizeof out));
  CHECK(cuMemcpyDtoH(tickets, d_tickets, sizeof tickets));

  int early_count = 0;
  for (int i = 0; i < N; ++i)
    early_count += out[i] >= 1000;
  printf("early %d of %d (threshold %u)\n", early_count, N, threshold);
  for (int i = 0; i < N; ++i)
    printf("%d%c", out[i] >= 1000 ? 1 : 0, i % 64 == 63 ? '\n' : ' ');
  CHECK(cuModuleUnload(mod));
  CHECK(cuCtxDestroy(ctx));
  free(ptx);
  return 0;
}
