// prlx's declaration of NVBit 1.7's nvbit.h, as far as the tool uses it:
// the Instr class, the callbacks a tool defines, and the inspection,
// injection and control functions NVBit provides. See README.md: not
// NVBit's file; the driver-API metadata NVBit generates
// (tools_cuda_api_meta.h, generated_cuda_meta.h) is reduced to the launch
// entries the tool reads.
#pragma once

#include <pthread.h>
#include <stdint.h>

#include <vector>

#include "cuda.h"
#include "instr_types.h"

class Instr {
 public:
  const char *getSass();
  uint32_t getOffset();
  uint32_t getIdx();
  bool hasPred();
  int getPredNum();
  bool isPredNeg();
  bool isPredUniform();
  const char *getOpcode();
  const char *getOpcodeShort();
  InstrType::MemorySpace getMemorySpace();
  bool isLoad();
  bool isStore();
  int getSize();
  int getNumOperands();
  const InstrType::operand_t *getOperand(int num_operand);
  void printDecoded();
  void print(const char *prefix = NULL);

 private:
  const void *reserved;
};

// One enumerator per driver entry point in NVBit (API_CUDA_<name>); the ones
// the tool switches on.
typedef enum {
  API_CUDA_INVALID = 0,
  API_CUDA_cuLaunchKernel,
  API_CUDA_cuLaunchKernel_ptsz,
  API_CUDA_cuLaunchCooperativeKernel,
  API_CUDA_cuLaunchCooperativeKernel_ptsz,
  API_CUDA_cuLaunchKernelEx,
  API_CUDA_cuLaunchKernelEx_ptsz,
} nvbit_api_cuda_t;

// The parameter records NVBit passes to nvbit_at_cuda_event (the driver
// function's arguments, in order).
typedef struct cuLaunchKernel_params_st {
  CUfunction f;
  unsigned int gridDimX;
  unsigned int gridDimY;
  unsigned int gridDimZ;
  unsigned int blockDimX;
  unsigned int blockDimY;
  unsigned int blockDimZ;
  unsigned int sharedMemBytes;
  CUstream hStream;
  void **kernelParams;
  void **extra;
} cuLaunchKernel_params;

typedef struct cuLaunchKernelEx_params_st {
  const CUlaunchConfig *config;
  CUfunction f;
  void **kernelParams;
  void **extra;
} cuLaunchKernelEx_params;

extern "C" {

// Callbacks a tool defines.
void nvbit_at_init();
void nvbit_at_term();
void nvbit_at_ctx_init(CUcontext ctx);
void nvbit_at_ctx_term(CUcontext ctx);
void nvbit_tool_init(CUcontext ctx);
void nvbit_at_cuda_event(CUcontext ctx, int is_exit, nvbit_api_cuda_t cbid, const char *event_name,
                         void *params, CUresult *pStatus);

// Inspection.
std::vector<CUfunction> nvbit_get_related_functions(CUcontext ctx, CUfunction func);
const std::vector<Instr *> &nvbit_get_instrs(CUcontext ctx, CUfunction func);
const char *nvbit_get_func_name(CUcontext ctx, CUfunction f, bool mangled = false);
bool nvbit_get_line_info(CUcontext cuctx, CUfunction cufunc, uint32_t offset, char **file_name,
                         char **dir_name, uint32_t *line);

// Injection.
typedef enum { IPOINT_BEFORE, IPOINT_AFTER } ipoint_t;
void nvbit_insert_call(const Instr *instr, const char *dev_func_name, ipoint_t point);
void nvbit_add_call_arg_guard_pred_val(const Instr *instr, bool is_variadic_arg = false);
void nvbit_add_call_arg_const_val32(const Instr *instr, uint32_t val, bool is_variadic_arg = false);
void nvbit_add_call_arg_const_val64(const Instr *instr, uint64_t val, bool is_variadic_arg = false);
void nvbit_add_call_arg_reg_val(const Instr *instr, int reg_num, bool is_variadic_arg = false);

// Control.
void nvbit_enable_instrumented(CUcontext ctx, CUfunction func, bool flag,
                               bool apply_to_related = true);
void nvbit_set_tool_pthread(pthread_t tool_pthread);
}
