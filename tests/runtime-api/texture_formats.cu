// Texture element formats and shapes: uchar4 read as normalized floats
// (point and bilinear) and as integers, signed 8/16-bit normalized reads,
// half-precision textures, a layered 2D array, a 3D array filled with
// cudaMemcpy3D (trilinear), tex2Dgather, and the descriptors read back.
#include "check.h"
#include <cuda_fp16.h>
#include <vector>

static float weight(float frac) { return roundf(frac * 256.0f) / 256.0f; }
static int clampi(int i, int n) { return i < 0 ? 0 : (i >= n ? n - 1 : i); }

__global__ void read_uchar4_float(cudaTextureObject_t t, const float2 *c, float4 *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex2D<float4>(t, c[i].x, c[i].y);
}

__global__ void read_uchar4_int(cudaTextureObject_t t, int w, int h, uchar4 *out) {
    int x = threadIdx.x, y = blockIdx.x;
    if (x < w && y < h) out[y * w + x] = tex2D<uchar4>(t, x + 0.5f, y + 0.5f);
}

__global__ void read_1d_float(cudaTextureObject_t t, const float *x, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1D<float>(t, x[i]);
}

__global__ void read_layered(cudaTextureObject_t t, int w, int h, int layers, float *out) {
    int x = threadIdx.x, y = threadIdx.y, l = blockIdx.x;
    if (x < w && y < h && l < layers) out[(l * h + y) * w + x] = tex2DLayered<float>(t, x + 0.25f, y + 0.75f, l);
}

__global__ void read_3d(cudaTextureObject_t t, const float4 *c, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex3D<float>(t, c[i].x, c[i].y, c[i].z);
}

__global__ void gather(cudaTextureObject_t t, float x, float y, float4 *out) {
    out[0] = tex2Dgather<float4>(t, x, y, 0);
    out[1] = tex2Dgather<float4>(t, x, y, 2);
}

static cudaTextureObject_t make(cudaArray_t a, bool linear, bool normalized_read, cudaTextureAddressMode m = cudaAddressModeClamp) {
    cudaResourceDesc res = {};
    res.resType = cudaResourceTypeArray;
    res.res.array.array = a;
    cudaTextureDesc td = {};
    td.addressMode[0] = td.addressMode[1] = td.addressMode[2] = m;
    td.filterMode = linear ? cudaFilterModeLinear : cudaFilterModePoint;
    td.readMode = normalized_read ? cudaReadModeNormalizedFloat : cudaReadModeElementType;
    cudaTextureObject_t t;
    CHECK(cudaCreateTextureObject(&t, &res, &td, nullptr));
    return t;
}

int main() {
    // uchar4, 2D.
    const int W = 6, H = 4;
    std::vector<uchar4> px(W * H);
    for (int i = 0; i < W * H; i++) px[i] = make_uchar4(i * 11 % 256, 255 - i * 7, i * 53 % 256, 128 + i);
    cudaChannelFormatDesc ch4 = cudaCreateChannelDesc<uchar4>();
    cudaArray_t a4;
    CHECK(cudaMallocArray(&a4, &ch4, W, H));
    CHECK(cudaMemcpy2DToArray(a4, 0, 0, px.data(), W * 4, W * 4, H, cudaMemcpyHostToDevice));
    {
        // Element type: the bytes themselves.
        cudaTextureObject_t t = make(a4, false, false);
        uchar4 *dout;
        CHECK(cudaMalloc(&dout, W * H * sizeof(uchar4)));
        read_uchar4_int<<<H, W>>>(t, W, H, dout);
        std::vector<uchar4> back(W * H);
        CHECK(cudaMemcpy(back.data(), dout, W * H * sizeof(uchar4), cudaMemcpyDeviceToHost));
        for (int i = 0; i < W * H; i++)
            EXPECT(back[i].x == px[i].x && back[i].y == px[i].y && back[i].z == px[i].z && back[i].w == px[i].w, "texel %d", i);
        CHECK(cudaDestroyTextureObject(t));
        CHECK(cudaFree(dout));
    }
    std::vector<float2> cs;
    for (float y = -0.7f; y < H + 0.7f; y += 0.43f)
        for (float x = -0.9f; x < W + 0.9f; x += 0.37f) cs.push_back(make_float2(x, y));
    int n = (int)cs.size();
    float2 *dc;
    float4 *d4;
    CHECK(cudaMalloc(&dc, n * sizeof(float2)));
    CHECK(cudaMalloc(&d4, n * sizeof(float4)));
    CHECK(cudaMemcpy(dc, cs.data(), n * sizeof(float2), cudaMemcpyHostToDevice));
    std::vector<float4> got(n);
    for (int linear = 0; linear < 2; linear++) {
        cudaTextureObject_t t = make(a4, linear, true);
        read_uchar4_float<<<(n + 63) / 64, 64>>>(t, dc, d4, n);
        CHECK(cudaGetLastError());
        CHECK(cudaMemcpy(got.data(), d4, n * sizeof(float4), cudaMemcpyDeviceToHost));
        for (int i = 0; i < n; i++) {
            float want[4] = {0, 0, 0, 0};
            auto texel = [&](int x, int y, int c) {
                uchar4 p = px[clampi(y, H) * W + clampi(x, W)];
                unsigned char v = c == 0 ? p.x : c == 1 ? p.y : c == 2 ? p.z : p.w;
                return v / 255.0f;
            };
            if (!linear) {
                for (int c = 0; c < 4; c++) want[c] = texel((int)floorf(cs[i].x), (int)floorf(cs[i].y), c);
            } else {
                // The H200 filters 8-bit texels as integers with the
                // bilinear corner weights (w11 = round(A*B/256), the others
                // what is left) and returns a 16-bit normalized value.
                float ub = cs[i].x - 0.5f, vb = cs[i].y - 0.5f;
                int x0 = (int)floorf(ub), y0 = (int)floorf(vb);
                int A = (int)roundf((ub - floorf(ub)) * 256.0f), B = (int)roundf((vb - floorf(vb)) * 256.0f);
                int w11 = (A * B + 128) >> 8;
                int wgt[4] = {256 - A - B + w11, A - w11, B - w11, w11};
                for (int c = 0; c < 4; c++) {
                    long sum = 0;
                    for (int corner = 0; corner < 4; corner++)
                        sum += wgt[corner] * lround(texel(x0 + (corner & 1), y0 + (corner >> 1), c) * 255.0f);
                    want[c] = (float)(((sum * 257 + 128) >> 8) / 65535.0);
                }
            }
            float g[4] = {got[i].x, got[i].y, got[i].z, got[i].w};
            for (int c = 0; c < 4; c++)
                EXPECT(close_to(g[c], want[c], 1e-6), "uchar4 linear %d at (%f, %f) channel %d: got %.9g want %.9g",
                       linear, cs[i].x, cs[i].y, c, g[c], want[c]);
            // What an H200 returned for the fifth coordinate, (0.58, -0.7).
            if (linear && i == 4)
                EXPECT(g[0] == 0.00337224384f, "uchar4 linear at (%f, %f): got %.9g, the H200 returned 0.00337224384",
                       cs[i].x, cs[i].y, g[0]);
        }
        CHECK(cudaDestroyTextureObject(t));
    }
    // tex2Dgather: channel 0 and 2 of the 2x2 footprint, (i0,j1) (i1,j1) (i1,j0) (i0,j0).
    {
        cudaTextureObject_t t = make(a4, false, true);
        gather<<<1, 1>>>(t, 2.6f, 1.3f, d4);
        float4 g[2];
        CHECK(cudaMemcpy(g, d4, sizeof g, cudaMemcpyDeviceToHost));
        int i0 = 2, j0 = 0;  // floor(2.6 - 0.5), floor(1.3 - 0.5)
        auto ch = [&](int x, int y, int c) { uchar4 p = px[y * W + x]; return (c == 0 ? p.x : p.z) / 255.0f; };
        for (int k = 0; k < 2; k++) {
            int c = k * 2;
            EXPECT(g[k].x == ch(i0, j0 + 1, c) && g[k].y == ch(i0 + 1, j0 + 1, c) && g[k].z == ch(i0 + 1, j0, c) && g[k].w == ch(i0, j0, c),
                   "gather channel %d: %g %g %g %g", c, g[k].x, g[k].y, g[k].z, g[k].w);
        }
        CHECK(cudaDestroyTextureObject(t));
    }

    // Signed 8- and 16-bit normalized reads, and half, in 1D arrays with linear filtering.
    {
        const int N = 9;
        std::vector<float> xs;
        for (float x = -0.5f; x < N + 0.5f; x += 0.23f) xs.push_back(x);
        int m = (int)xs.size();
        float *dx, *dout;
        CHECK(cudaMalloc(&dx, m * sizeof(float)));
        CHECK(cudaMalloc(&dout, m * sizeof(float)));
        CHECK(cudaMemcpy(dx, xs.data(), m * sizeof(float), cudaMemcpyHostToDevice));
        std::vector<float> out(m);
        signed char s8[N];
        short s16[N];
        __half h16[N];
        float v8[N], v16[N], vh[N];
        for (int i = 0; i < N; i++) {
            s8[i] = (signed char)(i * 31 - 128);
            s16[i] = (short)(i * 8000 - 32768);
            h16[i] = __float2half(i * 0.37f - 1.0f);
            v8[i] = fmaxf(s8[i] / 127.0f, -1.0f);
            v16[i] = fmaxf(s16[i] / 32767.0f, -1.0f);
            vh[i] = __half2float(h16[i]);
        }
        struct Case { cudaChannelFormatDesc ch; const void *data; size_t size; const float *values; bool normalized; const char *name; };
        Case cases[3] = {
            {cudaCreateChannelDesc<signed char>(), s8, 1, v8, true, "s8"},
            {cudaCreateChannelDesc<short>(), s16, 2, v16, true, "s16"},
            {cudaCreateChannelDescHalf(), h16, 2, vh, false, "half"},
        };
        for (auto &k : cases) {
            cudaArray_t a;
            CHECK(cudaMallocArray(&a, &k.ch, N));
            CHECK(cudaMemcpy2DToArray(a, 0, 0, k.data, N * k.size, N * k.size, 1, cudaMemcpyHostToDevice));
            cudaTextureObject_t t = make(a, true, k.normalized);
            read_1d_float<<<(m + 63) / 64, 64>>>(t, dx, dout, m);
            CHECK(cudaGetLastError());
            CHECK(cudaMemcpy(out.data(), dout, m * sizeof(float), cudaMemcpyDeviceToHost));
            for (int i = 0; i < m; i++) {
                float ub = xs[i] - 0.5f;
                int x0 = (int)floorf(ub);
                float a = weight(ub - floorf(ub));
                float want = 0.0f;
                want += (1.0f - a) * k.values[clampi(x0, N)];
                want += a * k.values[clampi(x0 + 1, N)];
                EXPECT(close_to(out[i], want, 1e-6), "%s at %f: got %.9g want %.9g", k.name, xs[i], out[i], want);
            }
            CHECK(cudaDestroyTextureObject(t));
            CHECK(cudaFreeArray(a));
        }
        CHECK(cudaFree(dx));
        CHECK(cudaFree(dout));
    }

    // Layered 2D array: each layer its own image; layer index is exact.
    {
        const int LW = 5, LH = 3, L = 4;
        std::vector<float> v(LW * LH * L);
        for (size_t i = 0; i < v.size(); i++) v[i] = (float)(i * 7 % 23) + 0.5f * (i / (LW * LH));
        cudaChannelFormatDesc ch = cudaCreateChannelDesc<float>();
        cudaArray_t a;
        CHECK(cudaMalloc3DArray(&a, &ch, make_cudaExtent(LW, LH, L), cudaArrayLayered));
        cudaMemcpy3DParms p = {};
        p.srcPtr = make_cudaPitchedPtr(v.data(), LW * sizeof(float), LW, LH);
        p.dstArray = a;
        p.extent = make_cudaExtent(LW, LH, L);
        p.kind = cudaMemcpyHostToDevice;
        CHECK(cudaMemcpy3D(&p));
        cudaTextureObject_t t = make(a, true, false);
        float *dout;
        CHECK(cudaMalloc(&dout, v.size() * sizeof(float)));
        read_layered<<<L, dim3(LW, LH)>>>(t, LW, LH, L, dout);
        CHECK(cudaGetLastError());
        std::vector<float> out(v.size());
        CHECK(cudaMemcpy(out.data(), dout, v.size() * sizeof(float), cudaMemcpyDeviceToHost));
        for (int l = 0; l < L; l++)
            for (int y = 0; y < LH; y++)
                for (int x = 0; x < LW; x++) {
                    // (x + 0.25, y + 0.75): weights 0.75 in x (between x-1 and x), 0.25 in y (between y and y+1).
                    auto T = [&](int i, int j) { return v[(l * LH + clampi(j, LH)) * LW + clampi(i, LW)]; };
                    float a = 0.75f, b = 0.25f, want = 0.0f;
                    want += (1 - a) * (1 - b) * T(x - 1, y);
                    want += a * (1 - b) * T(x, y);
                    want += (1 - a) * b * T(x - 1, y + 1);
                    want += a * b * T(x, y + 1);
                    float g = out[(l * LH + y) * LW + x];
                    EXPECT(close_to(g, want, 1e-6), "layer %d (%d, %d): got %.9g want %.9g", l, x, y, g, want);
                }
        // The descriptors read back as given.
        cudaResourceDesc rd;
        cudaTextureDesc td;
        CHECK(cudaGetTextureObjectResourceDesc(&rd, t));
        CHECK(cudaGetTextureObjectTextureDesc(&td, t));
        EXPECT(rd.resType == cudaResourceTypeArray && rd.res.array.array == a, "resource desc");
        EXPECT(td.filterMode == cudaFilterModeLinear && td.addressMode[1] == cudaAddressModeClamp, "texture desc");
        cudaChannelFormatDesc got_ch;
        cudaExtent ext;
        unsigned int flags;
        CHECK(cudaArrayGetInfo(&got_ch, &ext, &flags, a));
        EXPECT(got_ch.x == 32 && got_ch.f == cudaChannelFormatKindFloat && ext.width == LW && ext.height == LH && ext.depth == L &&
                   (flags & cudaArrayLayered),
               "array info %d %zu %zu %zu %u", got_ch.x, ext.width, ext.height, ext.depth, flags);
        CHECK(cudaDestroyTextureObject(t));
        CHECK(cudaFreeArray(a));
        CHECK(cudaFree(dout));
    }

    // 3D array via cudaMemcpy3D from pitched device memory; trilinear.
    {
        const int X = 4, Y = 3, Z = 5;
        std::vector<float> v(X * Y * Z);
        for (size_t i = 0; i < v.size(); i++) v[i] = (float)((i * 13) % 17) - 3.0f;
        cudaPitchedPtr dp;
        CHECK(cudaMalloc3D(&dp, make_cudaExtent(X * sizeof(float), Y, Z)));
        cudaMemcpy3DParms up = {};
        up.srcPtr = make_cudaPitchedPtr(v.data(), X * sizeof(float), X, Y);
        up.dstPtr = dp;
        up.extent = make_cudaExtent(X * sizeof(float), Y, Z);
        up.kind = cudaMemcpyHostToDevice;
        CHECK(cudaMemcpy3D(&up));
        cudaChannelFormatDesc ch = cudaCreateChannelDesc<float>();
        cudaArray_t a;
        CHECK(cudaMalloc3DArray(&a, &ch, make_cudaExtent(X, Y, Z)));
        cudaMemcpy3DParms p = {};
        p.srcPtr = dp;
        p.dstArray = a;
        p.extent = make_cudaExtent(X, Y, Z);
        p.kind = cudaMemcpyDeviceToDevice;
        CHECK(cudaMemcpy3D(&p));
        // Round trip back to the host through the array.
        std::vector<float> back(v.size());
        cudaMemcpy3DParms down = {};
        down.srcArray = a;
        down.dstPtr = make_cudaPitchedPtr(back.data(), X * sizeof(float), X, Y);
        down.extent = make_cudaExtent(X, Y, Z);
        down.kind = cudaMemcpyDeviceToHost;
        CHECK(cudaMemcpy3D(&down));
        for (size_t i = 0; i < v.size(); i++) EXPECT(back[i] == v[i], "3D round trip %zu", i);

        std::vector<float4> cs3;
        for (float z = -0.4f; z < Z + 0.4f; z += 0.61f)
            for (float y = 0.1f; y < Y; y += 0.7f)
                for (float x = 0.2f; x < X; x += 0.55f) cs3.push_back(make_float4(x, y, z, 0));
        int m = (int)cs3.size();
        float4 *dc3;
        float *dout;
        CHECK(cudaMalloc(&dc3, m * sizeof(float4)));
        CHECK(cudaMalloc(&dout, m * sizeof(float)));
        CHECK(cudaMemcpy(dc3, cs3.data(), m * sizeof(float4), cudaMemcpyHostToDevice));
        for (int linear = 0; linear < 2; linear++) {
            cudaTextureObject_t t = make(a, linear, false);
            read_3d<<<(m + 63) / 64, 64>>>(t, dc3, dout, m);
            CHECK(cudaGetLastError());
            std::vector<float> out(m);
            CHECK(cudaMemcpy(out.data(), dout, m * sizeof(float), cudaMemcpyDeviceToHost));
            auto T = [&](int x, int y, int z) { return v[(clampi(z, Z) * Y + clampi(y, Y)) * X + clampi(x, X)]; };
            for (int i = 0; i < m; i++) {
                float c[3] = {cs3[i].x, cs3[i].y, cs3[i].z}, want = 0.0f;
                if (!linear) {
                    want = T((int)floorf(c[0]), (int)floorf(c[1]), (int)floorf(c[2]));
                } else {
                    // The H200's 2D corner weights (measured) weighed by
                    // the z axis' 8-bit weight (assumed; not measured).
                    int b[3], A[3];
                    for (int d = 0; d < 3; d++) {
                        float ub = c[d] - 0.5f;
                        b[d] = (int)floorf(ub);
                        A[d] = (int)roundf((ub - floorf(ub)) * 256.0f);
                    }
                    int w11 = (A[0] * A[1] + 128) >> 8;
                    int plane[4] = {256 - A[0] - A[1] + w11, A[0] - w11, A[1] - w11, w11};
                    double acc = 0.0;
                    for (int corner = 0; corner < 8; corner++) {
                        int up = corner >> 2;
                        double wgt = plane[corner & 3] * (double)(up ? A[2] : 256 - A[2]);
                        acc += wgt * T(b[0] + (corner & 1), b[1] + (corner >> 1 & 1), b[2] + up);
                    }
                    want = (float)(acc / 65536.0);
                }
                EXPECT(close_to(out[i], want, 1e-6), "3D linear %d at (%f, %f, %f): got %.9g want %.9g", linear, c[0], c[1], c[2], out[i], want);
            }
            CHECK(cudaDestroyTextureObject(t));
        }
        CHECK(cudaFreeArray(a));
        CHECK(cudaFree(dp.ptr));
        CHECK(cudaFree(dc3));
        CHECK(cudaFree(dout));
    }

    CHECK(cudaFreeArray(a4));
    CHECK(cudaFree(dc));
    CHECK(cudaFree(d4));
    std::printf("texture_formats ok\n");
    return 0;
}
