/* A driver-API application that forks, for the capture shim's fork tests:
 * built against cuda.h, linked with -lcuda, unaware of prlx.
 *
 *   fork_app KERNELS.ptx launch-fork-launch   launch; fork, the child launches
 *                                             too; the parent waits, launches again
 *   fork_app KERNELS.ptx launch-fork-exit     the same, but the child only exits
 *   fork_app KERNELS.ptx fork-first           fork before any launch; both launch
 *   fork_app none                             never touches CUDA; prints nothing
 *
 * Every launch is checked against the host's answer. The child exits with
 * CHILD_EXIT (the parent checks it: a crash or a deadlock in the child shows
 * up there); the parent exits 0 and prints one line per launch. */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define N 128
#define CHILD_EXIT 5
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

static CUfunction clamp;

static char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) { perror(path); exit(1); }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc(n + 1);
  if (fread(buf, 1, n, f) != (size_t)n) { perror("fread"); exit(1); }
  buf[n] = 0;
  fclose(f);
  return buf;
}

/* One clamp_count launch over inputs that depend on `salt`; returns how
 * many values were clamped after checking every output. */
static int launch_and_check(const char *who, int salt) {
  float host_in[N], host_out[N];
  for (int i = 0; i < N; i++) host_in[i] = (float)((i + salt) % 11) * 0.5f;
  CUdeviceptr in, out, count;
  CHECK(cuMemAlloc(&in, sizeof host_in));
  CHECK(cuMemAlloc(&out, sizeof host_out));
  CHECK(cuMemAlloc(&count, sizeof(int)));
  CHECK(cuMemcpyHtoD(in, host_in, sizeof host_in));
  CHECK(cuMemsetD32(count, 0, 1));
  int n = N;
  float limit = 2.0f;
  void *params[] = {&in, &out, &count, &n, &limit};
  CHECK(cuLaunchKernel(clamp, N / 64, 1, 1, 64, 1, 1, 0, NULL, params, NULL));
  CHECK(cuCtxSynchronize());
  int clamped = 0, expect = 0;
  CHECK(cuMemcpyDtoH(host_out, out, sizeof host_out));
  CHECK(cuMemcpyDtoH(&clamped, count, sizeof clamped));
  for (int i = 0; i < N; i++) {
    float want = host_in[i] > limit ? limit : host_in[i];
    expect += host_in[i] > limit;
    if (host_out[i] != want) {
      fprintf(stderr, "%s: mismatch at %d\n", who, i);
      exit(1);
    }
  }
  if (clamped != expect) {
    fprintf(stderr, "%s: count %d != %d\n", who, clamped, expect);
    exit(1);
  }
  CHECK(cuMemFree(in));
  CHECK(cuMemFree(out));
  CHECK(cuMemFree(count));
  printf("%s: clamped %d\n", who, clamped);
  fflush(stdout);
  return clamped;
}

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "none") == 0) return 0;
  if (argc != 3) {
    fprintf(stderr, "usage: %s KERNELS.ptx launch-fork-launch|launch-fork-exit|fork-first\n",
            argv[0]);
    return 2;
  }
  const char *mode = argv[2];
  int child_launches = strcmp(mode, "launch-fork-exit") != 0;
  int launch_before_fork = strcmp(mode, "fork-first") != 0;

  CUdevice dev;
  CUcontext ctx;
  CUmodule module;
  CHECK(cuInit(0));
  CHECK(cuDeviceGet(&dev, 0));
  CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CHECK(cuCtxSetCurrent(ctx));
  char *ptx = read_file(argv[1]);
  CHECK(cuModuleLoadData(&module, ptx));
  free(ptx);
  CHECK(cuModuleGetFunction(&clamp, module, "clamp_count"));

  if (launch_before_fork) launch_and_check("parent", 0);
  pid_t child = fork();
  if (child < 0) { perror("fork"); return 1; }
  if (child == 0) {
    if (child_launches) launch_and_check("child", 3);
    exit(CHILD_EXIT); /* exit, not _exit: atexit handlers run in the child too */
  }
  int status = 0;
  if (waitpid(child, &status, 0) != child) { perror("waitpid"); return 1; }
  if (WIFEXITED(status))
    printf("parent: child exited %d\n", WEXITSTATUS(status));
  else
    printf("parent: child died with signal %d\n", WIFSIGNALED(status) ? WTERMSIG(status) : -1);
  launch_and_check("parent", 1);
  launch_and_check("parent", 2);
  CHECK(cuModuleUnload(module));
  CHECK(cuDevicePrimaryCtxRelease(dev));
  return WIFEXITED(status) && WEXITSTATUS(status) == CHILD_EXIT ? 0 : 1;
}
