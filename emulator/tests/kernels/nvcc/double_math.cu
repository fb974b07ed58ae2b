// Compiled by nvcc 13 at test time; its own module because libdevice's f64
// sin/cos slow-path range reduction emits mad.lo.cc/madc carry chains.

// libdevice double precision (CUDA documents sin/cos 2 ulp, exp/log 1 ulp,
// pow 2 ulp); large arguments take sin's slow-path range reduction.
extern "C" __global__ void nv_double_math(const double *x, double *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double v = x[i];
  double *o = out + 5 * i;
  o[0] = sin(v);
  o[1] = cos(v);
  o[2] = exp(v / 64.0);
  o[3] = log(fabs(v) + 1.0);
  o[4] = pow(fabs(v) + 0.5, 1.25);
}
