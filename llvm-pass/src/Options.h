// Command-line options of the prlx-instrument pass (cl::opt, so they work as
// `opt -prlx-...` and as `clang -mllvm -prlx-...`).
#pragma once

#include "llvm/Support/CommandLine.h"

#include <string>

namespace prlx {

extern llvm::cl::opt<std::string> FilterOpt;
extern llvm::cl::opt<bool> InstrumentGlobalStores;
extern llvm::cl::opt<bool> InstrumentFuncEntryExit;
extern llvm::cl::opt<bool> Snapshots;
extern llvm::cl::opt<bool> IdleCopyOpt;
extern llvm::cl::opt<std::string> SitesJsonPath;
extern llvm::cl::opt<std::string> TargetOverride;
extern llvm::cl::opt<unsigned> SiteIdMask;

} // namespace prlx

// ---- Inline PTX asm sites (Triton writes atomics and many stores as asm) ----
namespace prlx {

extern llvm::cl::opt<bool> AsmSites;

// What a recognised asm statement becomes.
enum class AsmSiteClass {
  Atomic,      // event Atomic
  SharedStore, // event SharedMemStore
  GlobalStore, // event GlobalStore (only with -prlx-instrument-global-stores)
  ByAddress,   // generic `st`: shared or global by what its address points into
};

// One recognised PTX statement shape. Operands are counted after the
// mnemonic, from 0: `atom.add.u32 d, [a], b` has d = 0, [a] = 1, b = 2.
struct AsmSitePattern {
  const char *Opcode; // first dot-separated part of the mnemonic
  const char *Space;  // a state-space part it must carry (a prefix, so
                      // "shared" matches .shared::cta), "" = must carry none
                      // of .global/.shared/.local/.param/.const, null = any
  AsmSiteClass Class;
  int ValueOperand;    // the operand whose first element is recorded
  int FallbackOperand; // used when ValueOperand is the sink `_`; -1 = none
};

// The table, in match order (first match wins); defined in Options.cpp with
// the skip rules.
extern const AsmSitePattern AsmSitePatterns[];
extern const unsigned NumAsmSitePatterns;

} // namespace prlx
