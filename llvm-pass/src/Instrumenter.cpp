#include "Instrumenter.h"

#include "IdleCopy.h"

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/Analysis/ValueTracking.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/Instructions.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"

#include <string>

using namespace llvm;

namespace prlx {

namespace {

// Values the runtime can record as one 32-bit word.
bool isRecordable(Type *T) {
  if (T->isIntegerTy() || T->isPointerTy() || T->isHalfTy() ||
      T->isBFloatTy() || T->isFloatTy() || T->isDoubleTy())
    return true;
  if (auto *VT = dyn_cast<FixedVectorType>(T))
    return VT->getPrimitiveSizeInBits().getFixedValue() <= 32 &&
           (VT->getElementType()->isIntegerTy() ||
            VT->getElementType()->isFloatingPointTy());
  return false;
}

// A vector too wide for one word is recorded by its first element.
Type *recordedType(Type *T) {
  if (auto *VT = dyn_cast<FixedVectorType>(T))
    if (!isRecordable(T))
      return VT->getElementType();
  return T;
}

// The 32-bit word recorded for `V`: narrow integers extended (signed when the
// consumer compares signed), wide ones truncated to their low word, pointers
// to their low address word, floats as IEEE f32 bits (half widened, double
// rounded to f32), small vectors as their bits.
Value *toWord(IRBuilder<> &B, Value *V, bool Signed) {
  Type *I32 = B.getInt32Ty();
  Type *T = V->getType();
  if (T->isPointerTy())
    return B.CreatePtrToInt(V, I32);
  if (T->isIntegerTy())
    return Signed ? B.CreateSExtOrTrunc(V, I32) : B.CreateZExtOrTrunc(V, I32);
  if (T->isHalfTy() || T->isBFloatTy())
    return B.CreateBitCast(B.CreateFPExt(V, B.getFloatTy()), I32);
  if (T->isFloatTy())
    return B.CreateBitCast(V, I32);
  if (T->isDoubleTy())
    return B.CreateBitCast(B.CreateFPTrunc(V, B.getFloatTy()), I32);
  unsigned Bits = T->getPrimitiveSizeInBits().getFixedValue();
  return B.CreateZExt(B.CreateBitCast(V, B.getIntNTy(Bits)), I32);
}

// Does `Asm` use operand `N` as an instruction predicate (`@$N` or `@!$N`)?
bool usesAsPredicate(StringRef Asm, unsigned N) {
  std::string Num = std::to_string(N);
  for (StringRef Prefix : {"@$", "@!$"}) {
    std::string Needle = Prefix.str() + Num;
    size_t Pos = 0;
    while ((Pos = Asm.find(Needle, Pos)) != StringRef::npos) {
      size_t End = Pos + Needle.size();
      if (End >= Asm.size() || !isDigit(Asm[End]))
        return true;
      Pos = End;
    }
  }
  return false;
}

} // namespace

CmpInst *predicatingCompare(const CallBase &Call) {
  const auto *IA = dyn_cast<InlineAsm>(Call.getCalledOperand());
  if (!IA)
    return nullptr;
  // Asm operands are numbered in constraint order (outputs first); a call
  // argument belongs to each input and to each indirect output.
  unsigned OperandNo = 0, ArgNo = 0;
  for (const InlineAsm::ConstraintInfo &C : IA->ParseConstraints()) {
    if (C.Type == InlineAsm::isClobber)
      continue;
    bool TakesArg = C.Type == InlineAsm::isInput ||
                    (C.Type == InlineAsm::isOutput && C.isIndirect);
    if (TakesArg) {
      if (ArgNo >= Call.arg_size())
        return nullptr;
      auto *Cmp = dyn_cast<CmpInst>(Call.getArgOperand(ArgNo));
      if (Cmp && Cmp->getType()->isIntegerTy(1) &&
          usesAsPredicate(IA->getAsmString(), OperandNo))
        return Cmp;
      ++ArgNo;
    }
    ++OperandNo;
  }
  return nullptr;
}

Instrumenter::Instrumenter(Module &M, GpuTarget Target, FunctionFilter Filter,
                           InstrumentOptions Opts, SiteTable &Table)
    : M(M), Target(Target), Filter(std::move(Filter)), Opts(Opts),
      Table(Table), Callbacks(M) {}

bool Instrumenter::run() {
  for (Function &F : M)
    if (!F.isDeclaration())
      Defined.insert(F.getName());

  for (Function &F : M) {
    SkipReason Why = Filter.classify(F);
    if (Why == SkipReason::None) {
      size_t Before = Pending.size();
      collect(F);
      if (Opts.Verbose)
        errs() << "[prlx] " << F.getName() << ": " << (Pending.size() - Before)
               << " sites\n";
    } else if (Opts.Verbose && Why != SkipReason::Declaration &&
               Why != SkipReason::Intrinsic) {
      errs() << "[prlx] " << F.getName() << ": skipped ("
             << skipReasonName(Why) << ")\n";
    }
  }
  // Only now touch the IR: every id above came from the compiler's IR.
  // Idle copies first, so that the probes go into the original blocks only.
  std::vector<IdleCopy> Copies;
  if (Opts.IdleCopies) {
    SmallPtrSet<Function *, 16> Seen;
    for (const PendingSite &S : Pending) {
      Function *F = S.At->getFunction();
      if (!Seen.insert(F).second)
        continue;
      if (const char *Why = idleCopyObstacle(*F)) {
        if (Opts.Verbose)
          errs() << "[prlx] " << F->getName() << ": no idle copy (" << Why
                 << ")\n";
        continue;
      }
      Copies.push_back(addIdleCopy(*F, Callbacks.enabled()));
    }
  }
  for (const PendingSite &S : Pending)
    insert(S);
  for (const IdleCopy &C : Copies)
    finishIdleCopy(C);
  return !Pending.empty();
}

bool Instrumenter::isGlobalPointer(const Value *Ptr) const {
  unsigned AS = Ptr->getType()->getPointerAddressSpace();
  if (AS == GlobalAddrSpace)
    return true;
  if (AS != 0)
    return false;
  // A generic (NVPTX) / flat (AMDGPU) pointer: decide by what it points into.
  const Value *Obj = getUnderlyingObject(Ptr);
  if (isa<AllocaInst>(Obj))
    return false; // the thread's own stack
  unsigned ObjAS = Obj->getType()->getPointerAddressSpace();
  if (ObjAS == GlobalAddrSpace)
    return true;
  // NVPTX passes kernel buffers as generic pointers; AMDGPU's flat pointers of
  // unknown origin are left alone (global memory there is addrspace(1)).
  return Target == GpuTarget::NVPTX && ObjAS == 0;
}

static bool pointsToShared(const Value *Ptr) {
  if (Ptr->getType()->getPointerAddressSpace() == SharedAddrSpace)
    return true;
  const Value *Obj = getUnderlyingObject(Ptr);
  return Obj->getType()->getPointerAddressSpace() == SharedAddrSpace;
}

void Instrumenter::addSite(Instruction &At, Probe What, SiteKind Kind) {
  uint32_t Id = Table.add(SiteTable::locationOf(At), Kind);
  Pending.push_back({&At, What, Id, -1});
}

// The skip rules here are the ones listed with AsmSitePatterns (Options.cpp).
std::optional<AsmSitePlan>
Instrumenter::planAsmSite(const CallInst &Call,
                          const PtxSiteStatement &St,
                          const char *&Why) const {
  Why = nullptr;
  auto Skip = [&](const char *Reason) -> std::optional<AsmSitePlan> {
    Why = Reason;
    return std::nullopt;
  };
  if (St.GuardInternal)
    return Skip("guard computed inside the asm");
  if (St.ValueOperand < 0)
    return Skip("value is not an asm operand");
  AsmSitePlan Plan{SiteKind::Atomic, {}, std::nullopt, false};
  if (St.GuardOperand >= 0) {
    std::optional<AsmOperandRef> G = asmOperandRef(Call, St.GuardOperand);
    if (!G || G->IsOutput || G->IndirectOutput ||
        !Call.getArgOperand(G->Index)->getType()->isIntegerTy(1))
      return Skip("guard is not an i1 argument");
    const Value *GV = Call.getArgOperand(G->Index);
    if (const auto *C = dyn_cast<ConstantInt>(GV)) {
      if (C->isOne() == St.GuardNegated)
        return Skip("constant guard that never holds");
    } else {
      Plan.Guard = G;
      Plan.GuardNegated = St.GuardNegated;
    }
  }
  std::optional<AsmOperandRef> V = asmOperandRef(Call, St.ValueOperand);
  if (!V || V->IndirectOutput)
    return Skip("value is not a register operand");
  Type *T = asmOperandType(Call, *V);
  if (!T || !isRecordable(recordedType(T)))
    return Skip("value type is not recordable");
  Plan.Value = *V;
  switch (St.Pattern->Class) {
  case AsmSiteClass::Atomic:
    Plan.Kind = SiteKind::Atomic;
    return Plan;
  case AsmSiteClass::SharedStore:
    Plan.Kind = SiteKind::SharedStore;
    return Plan;
  case AsmSiteClass::GlobalStore:
    if (!Opts.GlobalStores)
      return Skip("global store without -prlx-instrument-global-stores");
    Plan.Kind = SiteKind::GlobalStore;
    return Plan;
  case AsmSiteClass::ByAddress: {
    std::optional<AsmOperandRef> A =
        St.AddressOperand < 0 ? std::nullopt
                              : asmOperandRef(Call, St.AddressOperand);
    if (!A || A->IsOutput ||
        !Call.getArgOperand(A->Index)->getType()->isPointerTy())
      return Skip("generic st whose address is not a pointer operand");
    const Value *Ptr = Call.getArgOperand(A->Index);
    if (pointsToShared(Ptr))
      Plan.Kind = SiteKind::SharedStore;
    else if (Opts.GlobalStores && isGlobalPointer(Ptr))
      Plan.Kind = SiteKind::GlobalStore;
    else
      return Skip("generic st to neither shared nor (recorded) global memory");
    return Plan;
  }
  }
  return Skip("unknown pattern class");
}

void Instrumenter::collectAsm(CallInst &Call) {
  StringRef Template = cast<InlineAsm>(Call.getCalledOperand())->getAsmString();
  for (const PtxSiteStatement &St : matchPtxSiteStatements(Template)) {
    const char *Why = nullptr;
    std::optional<AsmSitePlan> Plan = planAsmSite(Call, St, Why);
    if (!Plan) {
      if (Opts.Verbose)
        errs() << "[prlx] " << Call.getFunction()->getName() << ": inline asm '"
               << St.Pattern->Opcode << "' statement not recorded (" << Why
               << ")\n";
      continue;
    }
    uint32_t Id = Table.add(SiteTable::locationOf(Call), Plan->Kind);
    AsmPlans.push_back(*Plan);
    Pending.push_back({&Call, Probe::InlineAsm, Id,
                       static_cast<int>(AsmPlans.size() - 1)});
  }
}

void Instrumenter::collect(Function &F) {
  // Compares that guard predicated inline asm (Triton's branch-free loads and
  // stores) are branch sites of their own.
  SmallPtrSet<CmpInst *, 8> Predicating;
  for (Instruction &I : instructions(F))
    if (auto *Call = dyn_cast<CallBase>(&I))
      if (CmpInst *Cmp = predicatingCompare(*Call))
        Predicating.insert(Cmp);
  // A select is a data-dependent choice: the compare deciding it records a
  // branch-like event (per-lane predicate); a select on anything else
  // records its condition itself (Probe::Select).
  for (Instruction &I : instructions(F))
    if (auto *Sel = dyn_cast<SelectInst>(&I))
      if (auto *Cmp = dyn_cast<CmpInst>(Sel->getCondition()))
        if (Cmp->getType()->isIntegerTy(1))
          Predicating.insert(Cmp);

  if (Opts.FuncEntryExit) {
    BasicBlock &Entry = F.getEntryBlock();
    BasicBlock::iterator It = Entry.getFirstInsertionPt();
    while (It != Entry.end() && isa<AllocaInst>(*It))
      ++It;
    uint32_t Id = Table.add(SiteTable::entryLocationOf(F), SiteKind::FuncEntry);
    Pending.push_back({&*It, Probe::FuncEntry, Id, -1});
  }

  for (Instruction &I : instructions(F)) {
    if (auto *BI = dyn_cast<BranchInst>(&I)) {
      if (BI->isConditional())
        addSite(I, Probe::Branch, SiteKind::Branch);
    } else if (isa<SwitchInst>(I)) {
      if (isRecordable(cast<SwitchInst>(I).getCondition()->getType()))
        addSite(I, Probe::Switch, SiteKind::Switch);
    } else if (auto *RMW = dyn_cast<AtomicRMWInst>(&I)) {
      if (isRecordable(RMW->getValOperand()->getType()))
        addSite(I, Probe::Atomic, SiteKind::Atomic);
    } else if (auto *CX = dyn_cast<AtomicCmpXchgInst>(&I)) {
      if (isRecordable(CX->getNewValOperand()->getType())) {
        // Inserted in reverse: the old value's event comes first.
        addSite(I, Probe::CasSuccess, SiteKind::Branch);
        addSite(I, Probe::Atomic, SiteKind::Atomic);
      }
    } else if (auto *Sel = dyn_cast<SelectInst>(&I)) {
      if (Sel->getCondition()->getType()->isIntegerTy(1) &&
          !isa<CmpInst>(Sel->getCondition()))
        addSite(I, Probe::Select, SiteKind::Branch);
    } else if (auto *SI = dyn_cast<StoreInst>(&I)) {
      if (!isRecordable(SI->getValueOperand()->getType()))
        continue;
      if (pointsToShared(SI->getPointerOperand()))
        addSite(I, Probe::SharedStore, SiteKind::SharedStore);
      else if (Opts.GlobalStores && isGlobalPointer(SI->getPointerOperand()))
        addSite(I, Probe::GlobalStore, SiteKind::GlobalStore);
    } else if (auto *Cmp = dyn_cast<CmpInst>(&I)) {
      if (Predicating.count(Cmp))
        addSite(I, Probe::PredicatedCmp, SiteKind::Branch);
    } else if (isa<ReturnInst>(I)) {
      if (Opts.FuncEntryExit)
        addSite(I, Probe::FuncExit, SiteKind::FuncExit);
    } else if (auto *Call = dyn_cast<CallInst>(&I)) {
      // Inline PTX (Triton's atomics and stores); not AMDGPU's asm.
      if (Opts.AsmSites && Target == GpuTarget::NVPTX && Call->isInlineAsm())
        collectAsm(*Call);
    }
  }
}

// A result is read after the asm, a written value before it (as for LLVM
// atomics and stores); a guarded statement records inside `if (guard)`, so
// the runtime sees exactly the lanes that execute it.
CallInst *Instrumenter::insertAsmRecord(CallInst &Call, const AsmSitePlan &Plan,
                                        uint32_t Id) {
  Instruction *Where = Plan.Value.IsOutput ? Call.getNextNode() : &Call;
  if (Plan.Guard) {
    IRBuilder<> G(Where);
    G.SetCurrentDebugLocation(Call.getDebugLoc());
    Value *Cond = Call.getArgOperand(Plan.Guard->Index);
    if (Plan.GuardNegated)
      Cond = G.CreateNot(Cond);
    Where = SplitBlockAndInsertIfThen(Cond, Where->getIterator(),
                                      /*Unreachable=*/false);
    // The new `br guard` (in the block that now only reaches `then`) and
    // `then`'s own br take the asm's location.
    Where->setDebugLoc(Call.getDebugLoc());
    Where->getParent()->getSinglePredecessor()->getTerminator()->setDebugLoc(
        Call.getDebugLoc());
  }
  IRBuilder<> B(Where);
  B.SetCurrentDebugLocation(Call.getDebugLoc());
  Value *V = !Plan.Value.IsOutput ? Call.getArgOperand(Plan.Value.Index)
             : Call.getType()->isStructTy()
                 ? B.CreateExtractValue(&Call, Plan.Value.Index)
                 : static_cast<Value *>(&Call);
  if (recordedType(V->getType()) != V->getType())
    V = B.CreateExtractElement(V, uint64_t(0));
  FunctionCallee Record = Plan.Kind == SiteKind::Atomic ? Callbacks.atomic()
                          : Plan.Kind == SiteKind::SharedStore
                              ? Callbacks.sharedStore()
                              : Callbacks.globalStore();
  return B.CreateCall(Record, {B.getInt32(Id), toWord(B, V, false)});
}

void Instrumenter::insertSnapshot(CmpInst &Cmp, uint32_t Id,
                                  Instruction &Before) {
  Value *L = Cmp.getOperand(0), *R = Cmp.getOperand(1);
  if (!isRecordable(L->getType()) || L->getType()->isVectorTy())
    return;
  IRBuilder<> B(&Before);
  B.SetCurrentDebugLocation(Before.getDebugLoc());
  bool Signed = Cmp.isSigned();
  CallInst *C = B.CreateCall(
      Callbacks.snapshot(),
      {B.getInt32(Id), toWord(B, L, Signed), toWord(B, R, Signed),
       B.getInt32(static_cast<uint32_t>(Cmp.getPredicate()))});
  C->addFnAttr(Attribute::Convergent);
}

void Instrumenter::insert(const PendingSite &S) {
  Instruction *At = S.At;
  IRBuilder<> B(At);
  B.SetCurrentDebugLocation(At->getDebugLoc());
  Value *Id = B.getInt32(S.Id);
  CallInst *C = nullptr;
  switch (S.What) {
  case Probe::Branch: {
    auto *BI = cast<BranchInst>(At);
    if (Opts.Snapshots)
      if (auto *Cmp = dyn_cast<CmpInst>(BI->getCondition()))
        insertSnapshot(*Cmp, S.Id, *At);
    C = B.CreateCall(Callbacks.branch(),
                     {Id, B.CreateZExt(BI->getCondition(), B.getInt32Ty())});
    break;
  }
  case Probe::PredicatedCmp: {
    // After the compare: its result is the predicate every lane computed.
    Instruction *Next = At->getNextNode();
    if (Opts.Snapshots)
      insertSnapshot(*cast<CmpInst>(At), S.Id, *Next);
    IRBuilder<> After(Next);
    After.SetCurrentDebugLocation(At->getDebugLoc());
    C = After.CreateCall(Callbacks.branch(),
                         {After.getInt32(S.Id),
                          After.CreateZExt(At, After.getInt32Ty())});
    break;
  }
  case Probe::Switch:
    C = B.CreateCall(Callbacks.switchValue(),
                     {Id, toWord(B, cast<SwitchInst>(At)->getCondition(),
                                 /*Signed=*/false)});
    break;
  case Probe::Atomic: {
    // After it: the value it returned (the old value), whose order across
    // lanes and warps is what a race changes.
    IRBuilder<> After(At->getNextNode());
    After.SetCurrentDebugLocation(At->getDebugLoc());
    Value *Old = isa<AtomicRMWInst>(At)
                     ? static_cast<Value *>(At)
                     : After.CreateExtractValue(At, uint64_t(0));
    C = After.CreateCall(Callbacks.atomic(),
                         {After.getInt32(S.Id), toWord(After, Old, false)});
    break;
  }
  case Probe::CasSuccess: {
    // Which lanes' compare-and-swap succeeded: a branch on the success bit.
    IRBuilder<> After(At->getNextNode());
    After.SetCurrentDebugLocation(At->getDebugLoc());
    Value *Ok = After.CreateExtractValue(At, uint64_t(1));
    C = After.CreateCall(Callbacks.branch(),
                         {After.getInt32(S.Id),
                          After.CreateZExt(Ok, After.getInt32Ty())});
    break;
  }
  case Probe::Select:
    C = B.CreateCall(
        Callbacks.branch(),
        {Id, B.CreateZExt(cast<SelectInst>(At)->getCondition(),
                          B.getInt32Ty())});
    break;
  case Probe::SharedStore:
    C = B.CreateCall(Callbacks.sharedStore(),
                     {Id, toWord(B, cast<StoreInst>(At)->getValueOperand(),
                                 false)});
    break;
  case Probe::GlobalStore:
    C = B.CreateCall(Callbacks.globalStore(),
                     {Id, toWord(B, cast<StoreInst>(At)->getValueOperand(),
                                 false)});
    break;
  case Probe::FuncEntry:
    C = B.CreateCall(Callbacks.func(), {Id, B.getInt32(1)});
    break;
  case Probe::FuncExit:
    C = B.CreateCall(Callbacks.func(), {Id, B.getInt32(0)});
    break;
  case Probe::InlineAsm:
    C = insertAsmRecord(*cast<CallInst>(At), AsmPlans[S.AsmPlan], S.Id);
    break;
  }
  C->addFnAttr(Attribute::Convergent);
}

} // namespace prlx
