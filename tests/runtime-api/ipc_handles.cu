// CUDA IPC through the runtime API: the parent exports a device buffer and
// an interprocess event, re-executes itself as a child and passes both
// handles through a pipe; the child opens them, waits on the event, adds
// 100 to every element with a kernel and closes the handle; the parent then
// sees the child's writes, and its own kernel still runs on the exported
// buffer. Also: opening a handle in its own process fails.
#include "check.h"
#include <sys/wait.h>
#include <unistd.h>

__global__ void bump(int *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 100;
}

struct Message {
    cudaIpcMemHandle_t memory;
    cudaIpcEventHandle_t event;
};

static const int n = 2048;

static int child() {
    Message m;
    size_t got = 0;
    while (got < sizeof m) {
        ssize_t r = read(0, reinterpret_cast<char *>(&m) + got, sizeof m - got);
        EXPECT(r > 0, "a whole message from the parent (%zu bytes)", got);
        got += static_cast<size_t>(r);
    }
    int *p;
    CHECK(cudaIpcOpenMemHandle(reinterpret_cast<void **>(&p), m.memory,
                               cudaIpcMemLazyEnablePeerAccess));
    cudaEvent_t e;
    CHECK(cudaIpcOpenEventHandle(&e, m.event));
    CHECK(cudaStreamWaitEvent(0, e, 0));
    bump<<<(n + 255) / 256, 256>>>(p, n);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaIpcCloseMemHandle(p));
    CHECK(cudaEventDestroy(e));
    return 0;
}

int main(int argc, char **argv) {
    if (argc > 1) return child();
    static int h[n];
    int *d;
    CHECK(cudaMalloc(&d, n * sizeof(int)));
    for (int i = 0; i < n; i++) h[i] = 3 * i;
    CHECK(cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice));
    Message m;
    CHECK(cudaIpcGetMemHandle(&m.memory, d));
    void *own = nullptr;
    EXPECT(cudaIpcOpenMemHandle(&own, m.memory, cudaIpcMemLazyEnablePeerAccess) != cudaSuccess,
           "a process cannot open its own handle");
    (void)cudaGetLastError();
    cudaEvent_t e;
    CHECK(cudaEventCreateWithFlags(&e, cudaEventInterprocess | cudaEventDisableTiming));
    CHECK(cudaEventRecord(e, 0));
    CHECK(cudaIpcGetEventHandle(&m.event, e));

    int fds[2];
    EXPECT(pipe(fds) == 0, "a pipe");
    std::fflush(stdout);
    pid_t pid = fork();
    EXPECT(pid >= 0, "fork");
    if (pid == 0) {
        dup2(fds[0], 0);
        close(fds[0]);
        close(fds[1]);
        execl("/proc/self/exe", argv[0], "child", static_cast<char *>(nullptr));
        _exit(127);
    }
    close(fds[0]);
    EXPECT(write(fds[1], &m, sizeof m) == static_cast<ssize_t>(sizeof m), "write the handles");
    close(fds[1]);
    int status = 0;
    EXPECT(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0,
           "the child succeeded (status %d)", status);
    CHECK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++) EXPECT(h[i] == 3 * i + 100, "h[%d] = %d", i, h[i]);
    // The exported buffer is still ordinary device memory here.
    bump<<<(n + 255) / 256, 256>>>(d, n);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++) EXPECT(h[i] == 3 * i + 200, "after the parent's kernel h[%d] = %d", i, h[i]);
    CHECK(cudaEventDestroy(e));
    CHECK(cudaFree(d));
    std::printf("ipc_handles ok\n");
    return 0;
}
