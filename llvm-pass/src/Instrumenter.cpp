#include "Instrumenter.h"

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/Analysis/ValueTracking.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/Instructions.h"
#include "llvm/Support/raw_ostream.h"

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
  for (const PendingSite &S : Pending)
    insert(S);
  return !Pending.empty();
}

bool Instrumenter::isGlobalStore(const StoreInst &SI) const {
  unsigned AS = SI.getPointerAddressSpace();
  if (AS == GlobalAddrSpace)
    return true;
  if (AS != 0)
    return false;
  // A generic (NVPTX) / flat (AMDGPU) pointer: decide by what it points into.
  const Value *Obj = getUnderlyingObject(SI.getPointerOperand());
  if (isa<AllocaInst>(Obj))
    return false; // the thread's own stack
  unsigned ObjAS = Obj->getType()->getPointerAddressSpace();
  if (ObjAS == GlobalAddrSpace)
    return true;
  // NVPTX passes kernel buffers as generic pointers; AMDGPU's flat pointers of
  // unknown origin are left alone (global memory there is addrspace(1)).
  return Target == GpuTarget::NVPTX && ObjAS == 0;
}

static bool pointsToShared(const StoreInst &SI) {
  if (SI.getPointerAddressSpace() == SharedAddrSpace)
    return true;
  const Value *Obj = getUnderlyingObject(SI.getPointerOperand());
  return Obj->getType()->getPointerAddressSpace() == SharedAddrSpace;
}

void Instrumenter::addSite(Instruction &At, Probe What, SiteKind Kind) {
  uint32_t Id = Table.add(SiteTable::locationOf(At), Kind);
  Pending.push_back({&At, What, Id});
}

void Instrumenter::collect(Function &F) {
  // Compares that guard predicated inline asm (Triton's branch-free loads and
  // stores) are branch sites of their own.
  SmallPtrSet<CmpInst *, 8> Predicating;
  for (Instruction &I : instructions(F))
    if (auto *Call = dyn_cast<CallBase>(&I))
      if (CmpInst *Cmp = predicatingCompare(*Call))
        Predicating.insert(Cmp);

  if (Opts.FuncEntryExit) {
    BasicBlock &Entry = F.getEntryBlock();
    BasicBlock::iterator It = Entry.getFirstInsertionPt();
    while (It != Entry.end() && isa<AllocaInst>(*It))
      ++It;
    uint32_t Id = Table.add(SiteTable::entryLocationOf(F), SiteKind::FuncEntry);
    Pending.push_back({&*It, Probe::FuncEntry, Id});
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
      if (isRecordable(CX->getNewValOperand()->getType()))
        addSite(I, Probe::Atomic, SiteKind::Atomic);
    } else if (auto *SI = dyn_cast<StoreInst>(&I)) {
      if (!isRecordable(SI->getValueOperand()->getType()))
        continue;
      if (pointsToShared(*SI))
        addSite(I, Probe::SharedStore, SiteKind::SharedStore);
      else if (Opts.GlobalStores && isGlobalStore(*SI))
        addSite(I, Probe::GlobalStore, SiteKind::GlobalStore);
    } else if (auto *Cmp = dyn_cast<CmpInst>(&I)) {
      if (Predicating.count(Cmp))
        addSite(I, Probe::PredicatedCmp, SiteKind::Branch);
    } else if (isa<ReturnInst>(I)) {
      if (Opts.FuncEntryExit)
        addSite(I, Probe::FuncExit, SiteKind::FuncExit);
    }
  }
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
    Value *V = isa<AtomicRMWInst>(At)
                   ? cast<AtomicRMWInst>(At)->getValOperand()
                   : cast<AtomicCmpXchgInst>(At)->getNewValOperand();
    C = B.CreateCall(Callbacks.atomic(), {Id, toWord(B, V, false)});
    break;
  }
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
  }
  C->addFnAttr(Attribute::Convergent);
}

} // namespace prlx
