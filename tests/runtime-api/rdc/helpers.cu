// The other translation unit of rdc.cu.
__device__ int rdc_offset = 11;
__device__ int scale_by(int x) { return 3 * x; }
