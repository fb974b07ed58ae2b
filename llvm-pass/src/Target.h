// Which GPU a module is compiled for; the pass leaves every other module alone.
#pragma once

#include "llvm/IR/Module.h"

namespace prlx {

enum class GpuTarget { None, NVPTX, AMDGPU };

// NVPTX when the triple contains "nvptx", AMDGPU when it contains "amdgcn";
// a module with an empty triple takes -prlx-target; anything else is None.
GpuTarget detectTarget(const llvm::Module &M);

const char *targetName(GpuTarget T);

// Address space of shared memory (LDS) on both targets.
constexpr unsigned SharedAddrSpace = 3;
constexpr unsigned GlobalAddrSpace = 1;

} // namespace prlx
