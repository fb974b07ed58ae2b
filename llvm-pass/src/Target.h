// Which GPU a module is compiled for; the pass leaves every other module alone.
#pragma once

#include "llvm/IR/Module.h"

namespace prlx {

enum class GpuTarget { None, NVPTX, AMDGPU };

// NVPTX when the triple contains "nvptx", AMDGPU when it contains "amdgcn";
// a module with an empty triple takes -prlx-target; anything else is None.
GpuTarget detectTarget(const llvm::Module &M);

const char *targetName(GpuTarget T);

// AMDGPU only: drops every `amdgpu-no-*` attribute (clang's promise that a
// function needs no dispatch pointer, no workitem id y/z, no workgroup id
// y/z, ...) from the module's defined functions. The device runtime the
// instrumented calls reach is linked after clang inferred those promises and
// does read these inputs, so kept promises would leave them uninitialised:
// llc's selection DAG crashes on the copy, GlobalISel reads garbage. llc
// infers them again from the final code. Returns whether anything changed.
bool dropAmdgpuImplicitInputPromises(llvm::Module &M);

// Address space of shared memory (LDS) on both targets.
constexpr unsigned SharedAddrSpace = 3;
constexpr unsigned GlobalAddrSpace = 1;

} // namespace prlx
