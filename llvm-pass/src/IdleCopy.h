// The idle copy: an instrumented function keeps an uninstrumented copy of
// its body, and a new entry block chooses between them once per call by
// asking the runtime whether the module is being captured
// (`__prlx_record_enabled`, one load of the descriptor once inlined). A module
// that is built with the pass but not captured then costs one load and one
// branch per call, whatever the function's loops visit
// (docs/instrumentation-overhead.md); the price is code size (the body twice).
//
// Made in two steps around the probe insertion: `addIdleCopy` before (the
// probes go into the original blocks, which the pending sites point at; the
// copy stays clean), `finishIdleCopy` after (moves the static allocas of both
// entry blocks into the new entry block, where they stay static, also when
// the function-entry probe was inserted before one of them).
#pragma once

#include "llvm/IR/Function.h"
#include "llvm/IR/Module.h"

#include <optional>

namespace prlx {

struct IdleCopy {
  llvm::BasicBlock *Check;        // the new entry: enabled? instrumented : idle
  llvm::BasicBlock *Instrumented; // the original entry block
  llvm::BasicBlock *Idle;         // its copy
};

// Why `F` cannot be given an idle copy (block addresses, indirectbr, callbr,
// convergence-control tokens), or null.
const char *idleCopyObstacle(const llvm::Function &F);

// Copies `F`'s body and puts the check in front; `Enabled` is
// `() -> i32 __prlx_record_enabled`. `F` must have no obstacle.
IdleCopy addIdleCopy(llvm::Function &F, llvm::FunctionCallee Enabled);

// Moves the constant-size allocas of both entry blocks to the check block.
void finishIdleCopy(const IdleCopy &Copy);

} // namespace prlx
