// Managed memory shared back and forth: the host writes, a kernel reads and
// updates, the host reads after the synchronize and writes again, several
// rounds, on a struct array and a scalar counter.
#include "check.h"
struct Particle { float x, v; int hits; };
__global__ void step(Particle *p, int n, float dt, int *moved) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    p[i].x += p[i].v * dt;
    if (p[i].x > 10.0f) { p[i].x -= 10.0f; p[i].hits++; atomicAdd(moved, 1); }
}
int main() {
    const int n = 3000, rounds = 4;
    Particle *p;
    int *moved;
    CHECK(cudaMallocManaged(&p, n * sizeof(Particle)));
    CHECK(cudaMallocManaged(&moved, sizeof(int), cudaMemAttachHost));
    Particle *ref = new Particle[n];
    for (int i = 0; i < n; i++) ref[i] = p[i] = Particle{(float)(i % 10), (float)(i % 13), 0};
    for (int r = 0; r < rounds; r++) {
        *moved = 0;
        step<<<(n + 127) / 128, 128>>>(p, n, 0.5f, moved);
        CHECK(cudaGetLastError());
        CHECK(cudaDeviceSynchronize());
        int expect_moved = 0;
        for (int i = 0; i < n; i++) {
            ref[i].x += ref[i].v * 0.5f;
            if (ref[i].x > 10.0f) { ref[i].x -= 10.0f; ref[i].hits++; expect_moved++; }
            EXPECT(p[i].x == ref[i].x && p[i].hits == ref[i].hits, "round %d particle %d: %f %d vs %f %d",
                   r, i, p[i].x, p[i].hits, ref[i].x, ref[i].hits);
        }
        EXPECT(*moved == expect_moved, "round %d: moved %d, expected %d", r, *moved, expect_moved);
        // The host changes the data between launches; the next kernel sees it.
        for (int i = 0; i < n; i += 7) { p[i].v = -p[i].v * 0.25f; ref[i].v = p[i].v; }
    }
    delete[] ref;
    CHECK(cudaFree(p));
    CHECK(cudaFree(moved));
    std::printf("managed_round_trip ok\n");
    return 0;
}
