// The instrumentation itself: find the sites of one module, give each an id,
// then insert the runtime calls. Two phases, so the ids are computed from the
// IR as the compiler produced it, never from IR the pass already changed.
#pragma once

#include "FunctionFilter.h"
#include "InlineAsmSites.h"
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
  PredicatedCmp,   // after a compare that predicates inline asm (Triton) or
                   // chooses a select's operand
  Select,          // before a select whose condition is no compare
  CasSuccess,      // after a cmpxchg: a branch event on its success bit
  Switch,          // before a switch
  Atomic,          // after atomicrmw / cmpxchg: the value it returned
  SharedStore,     // before a store to addrspace(3)
  GlobalStore,     // before a store to global memory
  FuncEntry,       // at the entry block's first insertion point
  FuncExit,        // before a ret
  InlineAsm,       // an asm statement matching AsmSitePatterns (Options.cpp)
};

struct PendingSite {
  llvm::Instruction *At;
  Probe What;
  uint32_t Id;
  int AsmPlan; // index into Instrumenter::AsmPlans for Probe::InlineAsm, else -1
};

// What to record for one recognised asm statement, resolved against the call.
struct AsmSitePlan {
  SiteKind Kind;
  AsmOperandRef Value;                // recorded (first element of) this operand
  std::optional<AsmOperandRef> Guard; // i1 argument guarding the statement
  bool GuardNegated = false;
};

struct InstrumentOptions {
  bool GlobalStores = false;
  bool FuncEntryExit = false;
  bool Snapshots = false;
  bool Verbose = false;
  bool AsmSites = true;
  bool IdleCopies = true; // an uninstrumented copy per function (IdleCopy.h)
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
  void collectAsm(llvm::CallInst &Call);
  // The plan, or null with `Why` naming the skip rule.
  std::optional<AsmSitePlan> planAsmSite(const llvm::CallInst &Call,
                                         const PtxSiteStatement &St,
                                         const char *&Why) const;
  bool isGlobalPointer(const llvm::Value *Ptr) const;
  void insert(const PendingSite &S);
  llvm::CallInst *insertAsmRecord(llvm::CallInst &Call, const AsmSitePlan &Plan,
                                  uint32_t Id);
  void insertSnapshot(llvm::CmpInst &Cmp, uint32_t Id,
                      llvm::Instruction &Before);

  llvm::Module &M;
  GpuTarget Target;
  FunctionFilter Filter;
  InstrumentOptions Opts;
  SiteTable &Table;
  RuntimeCallbacks Callbacks;
  std::vector<PendingSite> Pending;
  std::vector<AsmSitePlan> AsmPlans;
  llvm::StringSet<> Defined;
};

// The compare operand of `Call` that guards a predicated inline-asm
// instruction (`@$N` / `@!$N` in the asm string), or null.
llvm::CmpInst *predicatingCompare(const llvm::CallBase &Call);

} // namespace prlx
