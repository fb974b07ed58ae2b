/* Inter-process memory and events, NVIDIA-sample style: the parent
 * allocates device memory, fills it, exports it and an interprocess event,
 * and re-executes itself as a child, passing the handles through a pipe.
 * The child opens both, checks the parent's data, adds 1 to every word with
 * a kernel, and closes the handle; the parent then sees the child's writes.
 * The same for an allocation of an exportable memory pool
 * (cuMemPoolExportToShareableHandle / cuMemPoolExportPointer) and for a
 * virtual-memory allocation exported as a file descriptor, which the child
 * imports and maps at an address of its own (memMapIPCDrv's flow).
 * Also: the error codes of opening one's own handle, exporting an interior
 * pointer, exporting an event that records timing and exporting a pointer
 * of a pool without shareable handles.
 * Exits 0 and prints "ipc: all checks passed" when everything matched. */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHECK(call)                                                            \
  do {                                                                         \
    CUresult r_ = (call);                                                      \
    if (r_ != CUDA_SUCCESS) {                                                  \
      fprintf(stderr, "%s:%d: %s returned %d\n", __FILE__, __LINE__, #call,    \
              (int)r_);                                                        \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

#define EXPECT_CODE(call, code)                                                \
  do {                                                                         \
    CUresult r_ = (call);                                                      \
    if (r_ != (code)) {                                                        \
      fprintf(stderr, "%s:%d: %s returned %d, expected %d\n", __FILE__,        \
              __LINE__, #call, (int)r_, (int)(code));                          \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

#define WORDS 1000

struct message {
  CUipcMemHandle memory;
  CUipcEventHandle event;
  /* A memory pool's descriptor (inherited across exec) and one of its
   * allocations. */
  int pool_fd;
  CUmemPoolPtrExportData pooled;
  /* A virtual-memory allocation's descriptor (memMapIPCDrv's flow) and its
   * size. */
  int vmm_fd;
  size_t vmm_size;
};

static CUmemAllocationProp vmm_prop(void) {
  CUmemAllocationProp prop;
  memset(&prop, 0, sizeof prop);
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 0;
  return prop;
}

/* Reserves an address range for `handle`, maps it there and makes it
 * read-write for device 0. */
static CUdeviceptr map_vmm(CUmemGenericAllocationHandle handle, size_t size) {
  CUdeviceptr va;
  CUmemAccessDesc access;
  memset(&access, 0, sizeof access);
  access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  access.location.id = 0;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  CHECK(cuMemAddressReserve(&va, size, 0, 0, 0));
  CHECK(cuMemMap(va, size, 0, handle, 0));
  CHECK(cuMemSetAccess(va, size, &access, 1));
  return va;
}

static const char ptx[] =
    ".version 8.0\n.target sm_80\n.address_size 64\n"
    ".visible .entry add_one(.param .u64 p, .param .u32 n)\n{\n"
    "  .reg .pred %p1;\n  .reg .b32 %r<7>;\n  .reg .b64 %rd<4>;\n"
    "  ld.param.u64 %rd1, [p];\n  ld.param.u32 %r1, [n];\n"
    "  mov.u32 %r2, %ctaid.x;\n  mov.u32 %r3, %ntid.x;\n  mov.u32 %r4, %tid.x;\n"
    "  mad.lo.s32 %r5, %r2, %r3, %r4;\n  setp.ge.u32 %p1, %r5, %r1;\n"
    "  @%p1 bra DONE;\n  mul.wide.u32 %rd2, %r5, 4;\n  add.s64 %rd3, %rd1, %rd2;\n"
    "  ld.global.u32 %r6, [%rd3];\n  add.s32 %r6, %r6, 1;\n"
    "  st.global.u32 [%rd3], %r6;\nDONE:\n  ret;\n}\n";

static CUcontext setup(void) {
  CUdevice dev;
  CUcontext ctx;
  CHECK(cuInit(0));
  CHECK(cuDeviceGet(&dev, 0));
  /* The primary context: cuCtxCreate's signature differs in CUDA 13. */
  CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CHECK(cuCtxSetCurrent(ctx));
  return ctx;
}

static void add_one(CUdeviceptr p, unsigned n) {
  CUmodule module;
  CUfunction f;
  void *args[] = {&p, &n};
  CHECK(cuModuleLoadData(&module, ptx));
  CHECK(cuModuleGetFunction(&f, module, "add_one"));
  CHECK(cuLaunchKernel(f, (n + 127) / 128, 1, 1, 128, 1, 1, 0, NULL, args,
                       NULL));
  CHECK(cuCtxSynchronize());
  CHECK(cuModuleUnload(module));
}

static void check_words(CUdeviceptr p, unsigned times, unsigned plus,
                        const char *who) {
  static unsigned host[WORDS];
  CHECK(cuMemcpyDtoH(host, p, sizeof host));
  for (unsigned i = 0; i < WORDS; i++) {
    if (host[i] != i * times + plus) {
      fprintf(stderr, "%s: word %u is %u, expected %u\n", who, i, host[i],
              i * times + plus);
      exit(1);
    }
  }
}

static int child(void) {
  struct message m;
  size_t got = 0;
  while (got < sizeof m) {
    ssize_t n = read(0, (char *)&m + got, sizeof m - got);
    if (n <= 0) {
      fprintf(stderr, "child: short message\n");
      return 1;
    }
    got += (size_t)n;
  }
  setup();
  CUdeviceptr p, again;
  CHECK(cuIpcOpenMemHandle(&p, m.memory, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS));
  /* Opened twice in one context: the same pointer, reference counted. */
  CHECK(cuIpcOpenMemHandle(&again, m.memory,
                           CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS));
  if (again != p) {
    fprintf(stderr, "child: second open gave another pointer\n");
    return 1;
  }
  CUevent event;
  CHECK(cuIpcOpenEventHandle(&event, m.event));
  CHECK(cuStreamWaitEvent(NULL, event, 0));
  CHECK(cuEventSynchronize(event));
  CHECK(cuEventQuery(event));
  check_words(p, 7, 0, "child");
  add_one(p, WORDS);
  check_words(p, 7, 1, "child");
  CHECK(cuIpcCloseMemHandle(again));
  CHECK(cuIpcCloseMemHandle(p));
  EXPECT_CODE(cuIpcCloseMemHandle(p), CUDA_ERROR_INVALID_VALUE);

  /* The exporter's pool, and an allocation of it: freed with cuMemFree. */
  CUmemoryPool pool;
  CHECK(cuMemPoolImportFromShareableHandle(
      &pool, (void *)(uintptr_t)m.pool_fd,
      CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  CUdeviceptr pooled;
  CHECK(cuMemPoolImportPointer(&pooled, pool, &m.pooled));
  check_words(pooled, 5, 0, "child (pool)");
  add_one(pooled, WORDS);
  CHECK(cuMemFree(pooled));

  /* The parent's physical allocation, imported and mapped here. */
  CUmemGenericAllocationHandle imported;
  CHECK(cuMemImportFromShareableHandle(&imported, (void *)(uintptr_t)m.vmm_fd,
                                       CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
  CUdeviceptr va = map_vmm(imported, m.vmm_size);
  check_words(va, 11, 0, "child (virtual memory)");
  add_one(va, WORDS);
  CHECK(cuMemUnmap(va, m.vmm_size));
  CHECK(cuMemAddressFree(va, m.vmm_size));
  CHECK(cuMemRelease(imported));
  CHECK(cuEventDestroy(event));
  printf("ipc child: done\n");
  return 0;
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "child") == 0)
    return child();

  setup();
  CUdeviceptr d;
  static unsigned host[WORDS];
  for (unsigned i = 0; i < WORDS; i++)
    host[i] = i * 7;
  CHECK(cuMemAlloc(&d, sizeof host));
  CHECK(cuMemcpyHtoD(d, host, sizeof host));

  struct message m;
  memset(&m, 0, sizeof m);
  CHECK(cuIpcGetMemHandle(&m.memory, d));
  CUipcMemHandle interior;
  EXPECT_CODE(cuIpcGetMemHandle(&interior, d + 4), CUDA_ERROR_INVALID_VALUE);
  /* The exported memory is still the same device memory here. */
  check_words(d, 7, 0, "parent after export");
  CUdeviceptr own;
  EXPECT_CODE(cuIpcOpenMemHandle(&own, m.memory, 1),
              CUDA_ERROR_INVALID_CONTEXT);

  CUevent event, timed;
  CHECK(cuEventCreate(&event, CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING));
  CHECK(cuEventRecord(event, NULL));
  CHECK(cuIpcGetEventHandle(&m.event, event));
  CUipcEventHandle refused;
  CHECK(cuEventCreate(&timed, CU_EVENT_DEFAULT));
  EXPECT_CODE(cuIpcGetEventHandle(&refused, timed), CUDA_ERROR_INVALID_VALUE);

  /* A pool that may be exported, one allocation of it filled with 5 * i. */
  CUmemPoolProps props;
  memset(&props, 0, sizeof props);
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  props.location.id = 0;
  CUmemoryPool pool;
  CHECK(cuMemPoolCreate(&pool, &props));
  CUdeviceptr pooled;
  CHECK(cuMemAllocFromPoolAsync(&pooled, sizeof host, pool, NULL));
  for (unsigned i = 0; i < WORDS; i++)
    host[i] = i * 5;
  CHECK(cuMemcpyHtoD(pooled, host, sizeof host));
  CHECK(cuMemPoolExportToShareableHandle(
      &m.pool_fd, pool, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  CHECK(cuMemPoolExportPointer(&m.pooled, pooled));
  /* The default pool was made without shareable handles. */
  CUdeviceptr plain;
  CUmemPoolPtrExportData refused_data;
  CHECK(cuMemAllocAsync(&plain, 64, NULL));
  EXPECT_CODE(cuMemPoolExportPointer(&refused_data, plain),
              CUDA_ERROR_INVALID_VALUE);
  CHECK(cuMemFreeAsync(plain, NULL));

  /* Virtual memory: a physical allocation exported as a descriptor. */
  CUmemAllocationProp prop = vmm_prop();
  size_t granularity;
  CHECK(cuMemGetAllocationGranularity(&granularity, &prop,
                                      CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  m.vmm_size = granularity;
  CUmemGenericAllocationHandle physical;
  CHECK(cuMemCreate(&physical, m.vmm_size, &prop, 0));
  CUdeviceptr va = map_vmm(physical, m.vmm_size);
  for (unsigned i = 0; i < WORDS; i++)
    host[i] = i * 11;
  CHECK(cuMemcpyHtoD(va, host, sizeof host));
  CHECK(cuMemExportToShareableHandle(&m.vmm_fd, physical,
                                     CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
                                     0));

  int fds[2];
  if (pipe(fds) != 0) {
    perror("pipe");
    return 1;
  }
  fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) {
    perror("fork");
    return 1;
  }
  if (pid == 0) {
    dup2(fds[0], 0);
    close(fds[0]);
    close(fds[1]);
    /* The pool's descriptor survives exec, as if sent over a socket. */
    fcntl(m.pool_fd, F_SETFD, 0);
    fcntl(m.vmm_fd, F_SETFD, 0);
    execl("/proc/self/exe", argv[0], "child", (char *)NULL);
    perror("exec");
    _exit(127);
  }
  close(fds[0]);
  if (write(fds[1], &m, sizeof m) != (ssize_t)sizeof m) {
    perror("write");
    return 1;
  }
  close(fds[1]);
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
      WEXITSTATUS(status) != 0) {
    fprintf(stderr, "child failed (status %d)\n", status);
    return 1;
  }
  /* The child's kernel wrote through its own mapping of our memory. */
  check_words(d, 7, 1, "parent after child");
  check_words(pooled, 5, 1, "parent after child (pool)");
  CHECK(cuMemFreeAsync(pooled, NULL));
  CHECK(cuMemPoolDestroy(pool));
  check_words(va, 11, 1, "parent after child (virtual memory)");
  CHECK(cuMemUnmap(va, m.vmm_size));
  CHECK(cuMemAddressFree(va, m.vmm_size));
  CHECK(cuMemRelease(physical));
  close(m.vmm_fd);
  add_one(d, WORDS);
  check_words(d, 7, 2, "parent after its own kernel");
  CHECK(cuMemFree(d));
  CHECK(cuEventDestroy(event));
  CHECK(cuEventDestroy(timed));
  printf("ipc: all checks passed\n");
  return 0;
}
