// The instrumentation itself: find the sites of one module, give each an id,
// then insert the runtime calls. Two phases, so the ids are computed from the
// IR as the compiler produced it, never from IR the pass already changed.
#pragma once

#include "FunctionFilter.h"
#include "RuntimeCallbacks.h"
#include "SiteTable.h"
#include "Target.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/IR/InstrTypes.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"

#include <vector>

namespace prlx {

// What to insert at a site.
enum class Probe {
  Branch,          // before a conditional br
  PredicatedCmp,   // after a compare that predicates inline asm (Triton)
  Switch,          // before a switch
  Atomic,          // before atomicrmw / cmpxchg
  SharedStore,     // before a store to addrspace(3)
  GlobalStore,     // before a store to global memory
  FuncEntry,       // at the entry block's first insertion point
  FuncExit,        // before a ret
};

struct PendingSite {
  llvm::Instruction *At;
  Probe What;
  uint32_t Id;
};

struct InstrumentOptions {
  bool GlobalStores = false;
  bool FuncEntryExit = false;
  bool Snapshots = false;
  bool Verbose = false;
};

class Instrumenter {
public:
  Instrumenter(llvm::Module &M, GpuTarget Target, FunctionFilter Filter,
               InstrumentOptions Opts, SiteTable &Table);

  // Returns true when the module changed.
  bool run();

  // Every function the module defines (the merge key for prlx-sites.json).
  const llvm::StringSet<> &definedFunctions() const { return Defined; }

private:
  void collect(llvm::Function &F);
  void addSite(llvm::Instruction &At, Probe What, SiteKind Kind);
  bool isGlobalStore(const llvm::StoreInst &SI) const;
  void insert(const PendingSite &S);
  void insertSnapshot(llvm::CmpInst &Cmp, uint32_t Id,
                      llvm::Instruction &Before);

  llvm::Module &M;
  GpuTarget Target;
  FunctionFilter Filter;
  InstrumentOptions Opts;
  SiteTable &Table;
  RuntimeCallbacks Callbacks;
  std::vector<PendingSite> Pending;
  llvm::StringSet<> Defined;
};

// The compare operand of `Call` that guards a predicated inline-asm
// instruction (`@$N` / `@!$N` in the asm string), or null.
llvm::CmpInst *predicatingCompare(const llvm::CallBase &Call);

} // namespace prlx
