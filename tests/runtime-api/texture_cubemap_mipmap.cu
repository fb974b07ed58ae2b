// Cubemap and layered cubemap textures (face chosen by the major axis, as
// the Programming Guide's cubemap table), a mipmapped array sampled with
// tex2DLod (point and linear mip filtering, level clamps), and integer
// coordinates' texel fetch through txq-sized loops.
#include "check.h"
#include <vector>

__global__ void cube(cudaTextureObject_t t, const float4 *dir, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = texCubemap<float>(t, dir[i].x, dir[i].y, dir[i].z);
}

__global__ void cube_layered(cudaTextureObject_t t, const float4 *dir, float *out, int n, int layer) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = texCubemapLayered<float>(t, dir[i].x, dir[i].y, dir[i].z, layer);
}

__global__ void lod(cudaTextureObject_t t, const float4 *c, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex2DLod<float>(t, c[i].x, c[i].y, c[i].z);
}

static float weight(float frac) { return roundf(frac * 256.0f) / 256.0f; }

// Face and normalized (s, t) of a direction. On a tie of magnitudes z wins,
// then y: an H200 took face 3 (-y) for (0.68999994, -0.68999994, -0.63),
// which this loop's directions contain (z over x and y is assumed).
static int face_of(float x, float y, float z, float *s, float *t) {
    float ax = fabsf(x), ay = fabsf(y), az = fabsf(z), sc, tc, ma;
    int face;
    if (ax > ay && ax > az) { face = x >= 0 ? 0 : 1; sc = x >= 0 ? -z : z; tc = -y; ma = ax; }
    else if (ay > az) { face = y >= 0 ? 2 : 3; sc = x; tc = y >= 0 ? z : -z; ma = ay; }
    else { face = z >= 0 ? 4 : 5; sc = z >= 0 ? x : -x; tc = -y; ma = az; }
    *s = (sc / ma + 1.0f) * 0.5f;
    *t = (tc / ma + 1.0f) * 0.5f;
    return face;
}

int main() {
    const int N = 4, LAYERS = 2;
    // Texel (x, y) of face f of cube c: distinct everywhere.
    auto value = [](int c, int f, int x, int y) { return c * 1000.0f + f * 100.0f + y * 10.0f + x; };
    cudaChannelFormatDesc ch = cudaCreateChannelDesc<float>();
    std::vector<float4> dirs;
    for (float z = -1.1f; z <= 1.2f; z += 0.47f)
        for (float y = -1.3f; y <= 1.3f; y += 0.61f)
            for (float x = -0.9f; x <= 1.0f; x += 0.53f) dirs.push_back(make_float4(x, y, z, 0));
    int n = (int)dirs.size();
    float4 *dd;
    float *dout;
    CHECK(cudaMalloc(&dd, n * sizeof(float4)));
    CHECK(cudaMalloc(&dout, n * sizeof(float)));
    CHECK(cudaMemcpy(dd, dirs.data(), n * sizeof(float4), cudaMemcpyHostToDevice));
    std::vector<float> out(n);
    auto expect_cube = [&](int c, const char *what) {
        for (int i = 0; i < n; i++) {
            float s, t;
            int f = face_of(dirs[i].x, dirs[i].y, dirs[i].z, &s, &t);
            int x = (int)floorf(s * N), y = (int)floorf(t * N);
            x = x < 0 ? 0 : (x >= N ? N - 1 : x);
            y = y < 0 ? 0 : (y >= N ? N - 1 : y);
            float want = value(c, f, x, y);
            EXPECT(out[i] == want, "%s (%f, %f, %f): got %g want %g (face %d)", what, dirs[i].x, dirs[i].y, dirs[i].z, out[i], want, f);
        }
    };
    for (int layered = 0; layered < 2; layered++) {
        int cubes = layered ? LAYERS : 1;
        std::vector<float> texels(N * N * 6 * cubes);
        for (int c = 0; c < cubes; c++)
            for (int f = 0; f < 6; f++)
                for (int y = 0; y < N; y++)
                    for (int x = 0; x < N; x++) texels[((c * 6 + f) * N + y) * N + x] = value(c, f, x, y);
        cudaArray_t a;
        CHECK(cudaMalloc3DArray(&a, &ch, make_cudaExtent(N, N, 6 * cubes), cudaArrayCubemap | (layered ? cudaArrayLayered : 0)));
        cudaMemcpy3DParms p = {};
        p.srcPtr = make_cudaPitchedPtr(texels.data(), N * sizeof(float), N, N);
        p.dstArray = a;
        p.extent = make_cudaExtent(N, N, 6 * cubes);
        p.kind = cudaMemcpyHostToDevice;
        CHECK(cudaMemcpy3D(&p));
        cudaResourceDesc res = {};
        res.resType = cudaResourceTypeArray;
        res.res.array.array = a;
        cudaTextureDesc td = {};
        td.addressMode[0] = td.addressMode[1] = td.addressMode[2] = cudaAddressModeClamp;
        td.filterMode = cudaFilterModePoint;
        td.readMode = cudaReadModeElementType;
        td.normalizedCoords = 1;
        cudaTextureObject_t t;
        CHECK(cudaCreateTextureObject(&t, &res, &td, nullptr));
        if (!layered) {
            cube<<<(n + 63) / 64, 64>>>(t, dd, dout, n);
            CHECK(cudaGetLastError());
            CHECK(cudaMemcpy(out.data(), dout, n * sizeof(float), cudaMemcpyDeviceToHost));
            expect_cube(0, "cube");
        } else {
            for (int c = 0; c < LAYERS; c++) {
                cube_layered<<<(n + 63) / 64, 64>>>(t, dd, dout, n, c);
                CHECK(cudaGetLastError());
                CHECK(cudaMemcpy(out.data(), dout, n * sizeof(float), cudaMemcpyDeviceToHost));
                expect_cube(c, "layered cube");
            }
        }
        CHECK(cudaDestroyTextureObject(t));
        CHECK(cudaFreeArray(a));
    }

    // Mipmapped 8x8 -> 4x4 -> 2x2 -> 1x1; level l holds 2^l * 10 + (x + y) * 0.25 at (x, y).
    const int LEVELS = 4, S = 8;
    cudaMipmappedArray_t mm;
    CHECK(cudaMallocMipmappedArray(&mm, &ch, make_cudaExtent(S, S, 0), LEVELS));
    for (int l = 0; l < LEVELS; l++) {
        cudaArray_t level;
        CHECK(cudaGetMipmappedArrayLevel(&level, mm, l));
        int w = S >> l;
        std::vector<float> v(w * w);
        for (int y = 0; y < w; y++)
            for (int x = 0; x < w; x++) v[y * w + x] = (1 << l) * 10.0f + (x + y) * 0.25f;
        CHECK(cudaMemcpy2DToArray(level, 0, 0, v.data(), w * sizeof(float), w * sizeof(float), w, cudaMemcpyHostToDevice));
    }
    std::vector<float4> cs;
    for (float l = -0.5f; l < LEVELS + 0.6f; l += 0.3f)
        for (float u = 0.05f; u < 1.0f; u += 0.31f) cs.push_back(make_float4(u, 1.0f - u * 0.7f, l, 0));
    int m = (int)cs.size();
    float4 *dc;
    CHECK(cudaMalloc(&dc, m * sizeof(float4)));
    CHECK(cudaMemcpy(dc, cs.data(), m * sizeof(float4), cudaMemcpyHostToDevice));
    float *dl;
    CHECK(cudaMalloc(&dl, m * sizeof(float)));
    std::vector<float> got(m);
    for (int mip_linear = 0; mip_linear < 2; mip_linear++) {
        cudaResourceDesc res = {};
        res.resType = cudaResourceTypeMipmappedArray;
        res.res.mipmap.mipmap = mm;
        cudaTextureDesc td = {};
        td.addressMode[0] = td.addressMode[1] = cudaAddressModeClamp;
        td.filterMode = cudaFilterModePoint;
        td.mipmapFilterMode = mip_linear ? cudaFilterModeLinear : cudaFilterModePoint;
        td.readMode = cudaReadModeElementType;
        td.normalizedCoords = 1;
        td.minMipmapLevelClamp = 0.0f;
        td.maxMipmapLevelClamp = 2.5f;  // level 3 is never reached
        cudaTextureObject_t t;
        CHECK(cudaCreateTextureObject(&t, &res, &td, nullptr));
        lod<<<(m + 63) / 64, 64>>>(t, dc, dl, m);
        CHECK(cudaGetLastError());
        CHECK(cudaMemcpy(got.data(), dl, m * sizeof(float), cudaMemcpyDeviceToHost));
        auto at_level = [&](int l, float u, float v) {
            int w = S >> l;
            int x = (int)floorf(u * w), y = (int)floorf(v * w);
            x = x < 0 ? 0 : (x >= w ? w - 1 : x);
            y = y < 0 ? 0 : (y >= w ? w - 1 : y);
            return (1 << l) * 10.0f + (x + y) * 0.25f;
        };
        for (int i = 0; i < m; i++) {
            float l = fminf(fmaxf(cs[i].z, 0.0f), 2.5f), want;
            if (!mip_linear) {
                want = at_level((int)floorf(l + 0.5f), cs[i].x, cs[i].y);
            } else {
                int l0 = (int)floorf(l);
                float w = weight(l - floorf(l));
                float a = at_level(l0, cs[i].x, cs[i].y);
                want = w == 0.0f ? a : (1.0f - w) * a + w * at_level(l0 + 1, cs[i].x, cs[i].y);
            }
            EXPECT(close_to(got[i], want, 1e-6), "tex2DLod mip %s (%f, %f) lod %f: got %g want %g",
                   mip_linear ? "linear" : "point", cs[i].x, cs[i].y, cs[i].z, got[i], want);
        }
        CHECK(cudaDestroyTextureObject(t));
    }
    CHECK(cudaFreeMipmappedArray(mm));
    CHECK(cudaFree(dc));
    CHECK(cudaFree(dl));
    CHECK(cudaFree(dd));
    CHECK(cudaFree(dout));
    std::printf("texture_cubemap_mipmap ok\n");
    return 0;
}
