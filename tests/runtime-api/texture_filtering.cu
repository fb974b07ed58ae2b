// Texture objects over CUDA arrays, pitched and linear memory: point and
// linear filtering, every address mode, unnormalized and normalized
// coordinates, checked against a CPU model of the Programming Guide's
// texture fetching (linear weights in 9-bit fixed point: 8 fraction bits)
// with the bilinear corner weights an H200 uses.
#include "check.h"
#include <vector>

__global__ void sample_1d(cudaTextureObject_t t, const float *x, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1D<float>(t, x[i]);
}

__global__ void sample_2d(cudaTextureObject_t t, const float2 *c, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex2D<float>(t, c[i].x, c[i].y);
}

__global__ void fetch_linear(cudaTextureObject_t t, const int *idx, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1Dfetch<float>(t, idx[i]);
}

// --- CPU model ---------------------------------------------------------------

// Texel index after addressing; -1 for the border colour.
static int address(int i, int n, cudaTextureAddressMode m, bool normalized) {
    if (!normalized && (m == cudaAddressModeWrap || m == cudaAddressModeMirror)) m = cudaAddressModeClamp;
    switch (m) {
    case cudaAddressModeWrap: return ((i % n) + n) % n;
    case cudaAddressModeMirror: {
        int p = ((i % (2 * n)) + 2 * n) % (2 * n);
        return p >= n ? 2 * n - 1 - p : p;
    }
    case cudaAddressModeClamp: return i < 0 ? 0 : (i >= n ? n - 1 : i);
    default: return (i < 0 || i >= n) ? -1 : i;
    }
}

struct Image {
    std::vector<float> v;
    int w, h;
    float at(int x, int y) const { return (x < 0 || y < 0) ? 0.0f : v[y * w + x]; }  // border colour 0
};

static float reference(const Image &im, float x, float y, cudaTextureAddressMode m, bool linear, bool normalized) {
    float u = normalized ? x * im.w : x, vv = normalized ? y * im.h : y;
    if (!linear) {
        int i = address((int)floorf(u), im.w, m, normalized), j = address((int)floorf(vv), im.h, m, normalized);
        return (i < 0 || j < 0) ? 0.0f : im.at(i, j);
    }
    float ub = u - 0.5f, vb = vv - 0.5f;
    int i = (int)floorf(ub), j = (int)floorf(vb);
    // 8-bit axis weights; the 2D corner weights round their product once
    // (w11 = round(A*B/256), the others what is left), as an H200 does.
    int A = (int)roundf((ub - floorf(ub)) * 256.0f), B = im.h > 1 ? (int)roundf((vb - floorf(vb)) * 256.0f) : 0;
    int w11 = (A * B + 128) >> 8;
    int wgt[4] = {256 - A - B + w11, A - w11, B - w11, w11};
    int xs[2] = {address(i, im.w, m, normalized), address(i + 1, im.w, m, normalized)};
    int ys[2] = {address(j, im.h, m, normalized), address(j + 1, im.h, m, normalized)};
    double acc = 0.0;
    for (int corner = 0; corner < 4; corner++) {
        int cx = corner & 1, cy = corner >> 1;
        if (im.h == 1 && cy) continue;
        int tx = xs[cx], ty = im.h > 1 ? ys[cy] : 0;
        float t = (tx < 0 || ty < 0) ? 0.0f : im.at(tx, ty);
        acc += wgt[corner] * (double)t;
    }
    return (float)(acc / 256.0);
}

static cudaTextureObject_t make(const cudaResourceDesc &res, cudaTextureAddressMode m, bool linear, bool normalized) {
    cudaTextureDesc td = {};
    td.addressMode[0] = td.addressMode[1] = td.addressMode[2] = m;
    td.filterMode = linear ? cudaFilterModeLinear : cudaFilterModePoint;
    td.readMode = cudaReadModeElementType;
    td.normalizedCoords = normalized;
    cudaTextureObject_t t;
    CHECK(cudaCreateTextureObject(&t, &res, &td, nullptr));
    return t;
}

int main() {
    const int W = 7, H = 5;
    Image im{std::vector<float>(W * H), W, H};
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) im.v[y * W + x] = (float)((x * 37 + y * 91) % 101) - 20.0f;

    // 2D CUDA array.
    cudaChannelFormatDesc ch = cudaCreateChannelDesc<float>();
    cudaArray_t arr;
    CHECK(cudaMallocArray(&arr, &ch, W, H));
    CHECK(cudaMemcpy2DToArray(arr, 0, 0, im.v.data(), W * sizeof(float), W * sizeof(float), H, cudaMemcpyHostToDevice));
    cudaResourceDesc res = {};
    res.resType = cudaResourceTypeArray;
    res.res.array.array = arr;

    // Coordinates inside, on texel centres and edges, and well outside.
    std::vector<float2> coords;
    for (float y = -2.3f; y < H + 2.5f; y += 0.77f)
        for (float x = -3.1f; x < W + 3.0f; x += 0.59f) coords.push_back(make_float2(x, y));
    coords.push_back(make_float2(3.5f, 2.5f));
    coords.push_back(make_float2(0.0f, 0.0f));
    int n = (int)coords.size();
    float2 *dc;
    float *dout;
    CHECK(cudaMalloc(&dc, n * sizeof(float2)));
    CHECK(cudaMalloc(&dout, n * sizeof(float)));
    std::vector<float> out(n);

    const cudaTextureAddressMode modes[4] = {cudaAddressModeWrap, cudaAddressModeClamp, cudaAddressModeMirror, cudaAddressModeBorder};
    int checked = 0;
    for (int normalized = 0; normalized < 2; normalized++) {
        std::vector<float2> cs = coords;
        if (normalized)
            for (auto &c : cs) c = make_float2(c.x / W, c.y / H);
        CHECK(cudaMemcpy(dc, cs.data(), n * sizeof(float2), cudaMemcpyHostToDevice));
        for (int mi = 0; mi < 4; mi++) {
            // Wrap and mirror exist for normalized coordinates only.
            if (!normalized && (modes[mi] == cudaAddressModeWrap || modes[mi] == cudaAddressModeMirror)) continue;
            for (int linear = 0; linear < 2; linear++) {
                cudaTextureObject_t t = make(res, modes[mi], linear, normalized);
                sample_2d<<<(n + 127) / 128, 128>>>(t, dc, dout, n);
                CHECK(cudaGetLastError());
                CHECK(cudaMemcpy(out.data(), dout, n * sizeof(float), cudaMemcpyDeviceToHost));
                for (int i = 0; i < n; i++) {
                    float want = reference(im, cs[i].x, cs[i].y, modes[mi], linear, normalized);
                    EXPECT(close_to(out[i], want, 1e-6), "2D mode %d linear %d normalized %d at (%f, %f): got %.9g want %.9g",
                           mi, linear, normalized, cs[i].x, cs[i].y, out[i], want);
                    checked++;
                }
                CHECK(cudaDestroyTextureObject(t));
            }
        }
    }
    // What an H200 returned at the coordinates the loop above reaches as
    // (1.03, 0.78), bilinear, clamp: the product of the axis weights would
    // give 10.1591797.
    {
        cudaTextureObject_t t = make(res, cudaAddressModeClamp, true, false);
        float x = -3.1f, y = -2.3f;
        for (int k = 0; k < 7; k++) x += 0.59f;
        for (int k = 0; k < 4; k++) y += 0.77f;
        float2 c = make_float2(x, y);
        CHECK(cudaMemcpy(dc, &c, sizeof c, cudaMemcpyHostToDevice));
        sample_2d<<<1, 1>>>(t, dc, dout, 1);
        float got;
        CHECK(cudaMemcpy(&got, dout, sizeof got, cudaMemcpyDeviceToHost));
        EXPECT(got == 10.2578125f, "at (%f, %f): got %.9g, the H200 returned 10.2578125", x, y, got);
        CHECK(cudaDestroyTextureObject(t));
    }
    // The 8-bit weight is visible: 0.3 of the way from -20 to 17 is not 0.3 exactly.
    {
        cudaTextureObject_t t = make(res, cudaAddressModeClamp, true, false);
        float2 c = make_float2(0.5f + 0.3f, 0.5f);
        CHECK(cudaMemcpy(dc, &c, sizeof c, cudaMemcpyHostToDevice));
        sample_2d<<<1, 1>>>(t, dc, dout, 1);
        float got;
        CHECK(cudaMemcpy(&got, dout, sizeof got, cudaMemcpyDeviceToHost));
        float exact = im.v[0] + 0.3f * (im.v[1] - im.v[0]);
        float fixed = im.v[0] + (77.0f / 256.0f) * (im.v[1] - im.v[0]);
        EXPECT(close_to(got, fixed, 1e-6) && !close_to(got, exact, 1e-6), "got %.9g, fixed-point %.9g, exact %.9g", got, fixed, exact);
        CHECK(cudaDestroyTextureObject(t));
    }

    // 1D array, linear filtering with normalized wrap.
    {
        Image line{std::vector<float>(W), W, 1};
        for (int x = 0; x < W; x++) line.v[x] = x * x * 0.5f;
        cudaArray_t a1;
        CHECK(cudaMallocArray(&a1, &ch, W));
        CHECK(cudaMemcpy2DToArray(a1, 0, 0, line.v.data(), W * sizeof(float), W * sizeof(float), 1, cudaMemcpyHostToDevice));
        cudaResourceDesc r1 = {};
        r1.resType = cudaResourceTypeArray;
        r1.res.array.array = a1;
        std::vector<float> xs;
        for (float x = -1.3f; x < 2.3f; x += 0.071f) xs.push_back(x);
        int m = (int)xs.size();
        float *dx;
        CHECK(cudaMalloc(&dx, m * sizeof(float)));
        CHECK(cudaMemcpy(dx, xs.data(), m * sizeof(float), cudaMemcpyHostToDevice));
        for (int mi = 0; mi < 4; mi++) {
            cudaTextureObject_t t = make(r1, modes[mi], true, true);
            sample_1d<<<(m + 63) / 64, 64>>>(t, dx, dout, m);
            CHECK(cudaMemcpy(out.data(), dout, m * sizeof(float), cudaMemcpyDeviceToHost));
            for (int i = 0; i < m; i++) {
                float want = reference(line, xs[i], 0.5f, modes[mi], true, true);
                EXPECT(close_to(out[i], want, 1e-6), "1D mode %d at %f: got %.9g want %.9g", mi, xs[i], out[i], want);
                checked++;
            }
            CHECK(cudaDestroyTextureObject(t));
        }
        CHECK(cudaFree(dx));
        CHECK(cudaFreeArray(a1));
    }

    // Pitched linear memory, bilinear, clamp.
    {
        float *pm;
        size_t pitch;
        CHECK(cudaMallocPitch(&pm, &pitch, W * sizeof(float), H));
        CHECK(cudaMemcpy2D(pm, pitch, im.v.data(), W * sizeof(float), W * sizeof(float), H, cudaMemcpyHostToDevice));
        cudaResourceDesc rp = {};
        rp.resType = cudaResourceTypePitch2D;
        rp.res.pitch2D.devPtr = pm;
        rp.res.pitch2D.desc = ch;
        rp.res.pitch2D.width = W;
        rp.res.pitch2D.height = H;
        rp.res.pitch2D.pitchInBytes = pitch;
        cudaTextureObject_t t = make(rp, cudaAddressModeClamp, true, false);
        CHECK(cudaMemcpy(dc, coords.data(), n * sizeof(float2), cudaMemcpyHostToDevice));
        sample_2d<<<(n + 127) / 128, 128>>>(t, dc, dout, n);
        CHECK(cudaMemcpy(out.data(), dout, n * sizeof(float), cudaMemcpyDeviceToHost));
        for (int i = 0; i < n; i++) {
            float want = reference(im, coords[i].x, coords[i].y, cudaAddressModeClamp, true, false);
            EXPECT(close_to(out[i], want, 1e-6), "pitch2D at (%f, %f): got %.9g want %.9g", coords[i].x, coords[i].y, out[i], want);
            checked++;
        }
        CHECK(cudaDestroyTextureObject(t));
        CHECK(cudaFree(pm));
    }

    // Linear memory: tex1Dfetch by index, zero out of range.
    {
        float *lin;
        CHECK(cudaMalloc(&lin, W * H * sizeof(float)));
        CHECK(cudaMemcpy(lin, im.v.data(), W * H * sizeof(float), cudaMemcpyHostToDevice));
        cudaResourceDesc rl = {};
        rl.resType = cudaResourceTypeLinear;
        rl.res.linear.devPtr = lin;
        rl.res.linear.desc = ch;
        rl.res.linear.sizeInBytes = W * H * sizeof(float);
        cudaTextureObject_t t = make(rl, cudaAddressModeClamp, false, false);
        std::vector<int> idx;
        for (int i = -3; i < W * H + 3; i++) idx.push_back(i);
        int m = (int)idx.size();
        int *di;
        CHECK(cudaMalloc(&di, m * sizeof(int)));
        CHECK(cudaMemcpy(di, idx.data(), m * sizeof(int), cudaMemcpyHostToDevice));
        fetch_linear<<<(m + 63) / 64, 64>>>(t, di, dout, m);
        CHECK(cudaMemcpy(out.data(), dout, m * sizeof(float), cudaMemcpyDeviceToHost));
        for (int i = 0; i < m; i++) {
            float want = (idx[i] < 0 || idx[i] >= W * H) ? 0.0f : im.v[idx[i]];
            EXPECT(out[i] == want, "tex1Dfetch(%d): got %g want %g", idx[i], out[i], want);
            checked++;
        }
        CHECK(cudaDestroyTextureObject(t));
        CHECK(cudaFree(di));
        CHECK(cudaFree(lin));
    }

    CHECK(cudaFreeArray(arr));
    CHECK(cudaFree(dc));
    CHECK(cudaFree(dout));
    std::printf("texture_filtering ok (%d fetches)\n", checked);
    return 0;
}
