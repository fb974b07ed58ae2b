// Surface objects: a kernel writes a 2D float surface and a layered uchar4
// surface, another reads them back (surf2Dread, clamp and zero boundary
// modes out of range), the host checks through cudaMemcpy2DFromArray; a
// texture object over the same array sees what the surface wrote. Last, an
// out-of-range write in trap mode faults: cudaErrorIllegalAddress.
#include "check.h"
#include <vector>

__global__ void write_2d(cudaSurfaceObject_t s, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) surf2Dwrite(x * 100.0f + y, s, x * (int)sizeof(float), y);
}

__global__ void read_2d(cudaSurfaceObject_t s, int w, int h, float *out, float *clamped, float *zeroed) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) {
        out[y * w + x] = surf2Dread<float>(s, x * (int)sizeof(float), y) + 0.5f;
        // Shifted two texels right and down: out of range near the far edges.
        int sx = (x + 2) * (int)sizeof(float), sy = y + 2;
        clamped[y * w + x] = surf2Dread<float>(s, sx, sy, cudaBoundaryModeClamp);
        zeroed[y * w + x] = surf2Dread<float>(s, sx, sy, cudaBoundaryModeZero);
    }
}

__global__ void write_layered(cudaSurfaceObject_t s, int w, int h, int layers) {
    int x = threadIdx.x, y = threadIdx.y, l = blockIdx.x;
    if (x < w && y < h && l < layers) surf2DLayeredwrite(make_uchar4(x, y, l, x + y + l), s, x * 4, y, l);
}

__global__ void sum_layered(cudaSurfaceObject_t s, int w, int h, int layers, int *out) {
    int x = threadIdx.x, y = threadIdx.y;
    if (x < w && y < h) {
        int sum = 0;
        for (int l = 0; l < layers; l++) {
            uchar4 v = surf2DLayeredread<uchar4>(s, x * 4, y, l);
            sum += v.x + v.y + v.z + v.w;
        }
        out[y * w + x] = sum;
    }
}

__global__ void through_texture(cudaTextureObject_t t, int w, int h, float *out) {
    int x = threadIdx.x, y = blockIdx.x;
    if (x < w && y < h) out[y * w + x] = tex2D<float>(t, x + 0.5f, y + 0.5f);
}

__global__ void write_out_of_range(cudaSurfaceObject_t s, int w) {
    surf2Dwrite(1.0f, s, w * (int)sizeof(float), 0);  // one past the last texel: trap mode faults
}

int main() {
    const int W = 19, H = 11;
    cudaChannelFormatDesc ch = cudaCreateChannelDesc<float>();
    cudaArray_t a;
    CHECK(cudaMallocArray(&a, &ch, W, H, cudaArraySurfaceLoadStore));
    cudaResourceDesc res = {};
    res.resType = cudaResourceTypeArray;
    res.res.array.array = a;
    cudaSurfaceObject_t s;
    CHECK(cudaCreateSurfaceObject(&s, &res));
    dim3 block(8, 4), grid((W + 7) / 8, (H + 3) / 4);
    write_2d<<<grid, block>>>(s, W, H);
    CHECK(cudaGetLastError());
    float *dout, *dclamp, *dzero;
    CHECK(cudaMalloc(&dout, W * H * sizeof(float)));
    CHECK(cudaMalloc(&dclamp, W * H * sizeof(float)));
    CHECK(cudaMalloc(&dzero, W * H * sizeof(float)));
    read_2d<<<grid, block>>>(s, W, H, dout, dclamp, dzero);
    CHECK(cudaGetLastError());
    std::vector<float> out(W * H), clamped(W * H), zeroed(W * H), host(W * H);
    CHECK(cudaMemcpy(out.data(), dout, W * H * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(clamped.data(), dclamp, W * H * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(zeroed.data(), dzero, W * H * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy2DFromArray(host.data(), W * sizeof(float), a, 0, 0, W * sizeof(float), H, cudaMemcpyDeviceToHost));
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            float v = x * 100.0f + y;
            EXPECT(host[y * W + x] == v, "array (%d, %d) = %g", x, y, host[y * W + x]);
            EXPECT(out[y * W + x] == v + 0.5f, "surf2Dread (%d, %d) = %g", x, y, out[y * W + x]);
            int sx = x + 2, sy = y + 2;
            bool inside = sx < W && sy < H;
            float c = (sx < W ? sx : W - 1) * 100.0f + (sy < H ? sy : H - 1);
            EXPECT(clamped[y * W + x] == c, "clamp (%d, %d) = %g want %g", sx, sy, clamped[y * W + x], c);
            EXPECT(zeroed[y * W + x] == (inside ? c : 0.0f), "zero (%d, %d) = %g", sx, sy, zeroed[y * W + x]);
        }
    cudaResourceDesc back;
    CHECK(cudaGetSurfaceObjectResourceDesc(&back, s));
    EXPECT(back.resType == cudaResourceTypeArray && back.res.array.array == a, "surface resource desc");

    // The same array as a texture sees the surface's writes.
    {
        cudaTextureDesc td = {};
        td.addressMode[0] = td.addressMode[1] = cudaAddressModeClamp;
        td.filterMode = cudaFilterModePoint;
        td.readMode = cudaReadModeElementType;
        cudaTextureObject_t t;
        CHECK(cudaCreateTextureObject(&t, &res, &td, nullptr));
        through_texture<<<H, W>>>(t, W, H, dout);
        CHECK(cudaMemcpy(out.data(), dout, W * H * sizeof(float), cudaMemcpyDeviceToHost));
        for (int i = 0; i < W * H; i++) EXPECT(out[i] == host[i], "texture of the surface at %d: %g", i, out[i]);
        CHECK(cudaDestroyTextureObject(t));
    }

    // Layered uchar4 surface.
    {
        const int LW = 6, LH = 5, L = 3;
        cudaChannelFormatDesc c4 = cudaCreateChannelDesc<uchar4>();
        cudaArray_t la;
        CHECK(cudaMalloc3DArray(&la, &c4, make_cudaExtent(LW, LH, L), cudaArrayLayered | cudaArraySurfaceLoadStore));
        cudaResourceDesc lr = {};
        lr.resType = cudaResourceTypeArray;
        lr.res.array.array = la;
        cudaSurfaceObject_t ls;
        CHECK(cudaCreateSurfaceObject(&ls, &lr));
        write_layered<<<L, dim3(LW, LH)>>>(ls, LW, LH, L);
        int *dsum;
        CHECK(cudaMalloc(&dsum, LW * LH * sizeof(int)));
        sum_layered<<<1, dim3(LW, LH)>>>(ls, LW, LH, L, dsum);
        CHECK(cudaGetLastError());
        std::vector<int> sums(LW * LH);
        CHECK(cudaMemcpy(sums.data(), dsum, LW * LH * sizeof(int), cudaMemcpyDeviceToHost));
        for (int y = 0; y < LH; y++)
            for (int x = 0; x < LW; x++) {
                int want = 0;
                for (int l = 0; l < L; l++) want += x + y + l + (x + y + l);
                EXPECT(sums[y * LW + x] == want, "layered sum (%d, %d) = %d want %d", x, y, sums[y * LW + x], want);
            }
        CHECK(cudaDestroySurfaceObject(ls));
        CHECK(cudaFreeArray(la));
        CHECK(cudaFree(dsum));
    }

    // The API reference asks for an array made with cudaArraySurfaceLoadStore,
    // but driver 580 on an H200 creates a surface over one made without it.
    {
        cudaArray_t plain;
        CHECK(cudaMallocArray(&plain, &ch, 4, 4));
        cudaResourceDesc pr = {};
        pr.resType = cudaResourceTypeArray;
        pr.res.array.array = plain;
        cudaSurfaceObject_t plain_surface;
        EXPECT(cudaCreateSurfaceObject(&plain_surface, &pr) == cudaSuccess,
               "surface over an array without cudaArraySurfaceLoadStore (the H200 accepts it)");
        CHECK(cudaDestroySurfaceObject(plain_surface));
        CHECK(cudaFreeArray(plain));
    }

    // Trap mode: the write one past the end faults, as on a GPU.
    write_out_of_range<<<1, 1>>>(s, W);
    cudaError_t err = cudaDeviceSynchronize();
    EXPECT(err == cudaErrorIllegalAddress, "out-of-range trap write: %s", cudaGetErrorString(err));
    std::printf("surface_rw ok\n");
    return 0;
}
