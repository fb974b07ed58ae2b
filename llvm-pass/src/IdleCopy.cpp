#include "IdleCopy.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/IR/DebugInfoMetadata.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "llvm/Transforms/Utils/ValueMapper.h"

using namespace llvm;

namespace prlx {

const char *idleCopyObstacle(const Function &F) {
  for (const BasicBlock &BB : F) {
    // A blockaddress names one block; its copy would jump into the other body.
    if (BB.hasAddressTaken())
      return "a block's address is taken";
    for (const Instruction &I : BB) {
      if (isa<IndirectBrInst>(I))
        return "indirectbr";
      if (isa<CallBrInst>(I))
        return "callbr";
      if (const auto *II = dyn_cast<IntrinsicInst>(&I)) {
        Intrinsic::ID Id = II->getIntrinsicID();
        // convergence.entry must stay in the entry block.
        if (Id == Intrinsic::experimental_convergence_entry ||
            Id == Intrinsic::experimental_convergence_anchor ||
            Id == Intrinsic::experimental_convergence_loop)
          return "convergence-control tokens";
      }
    }
  }
  return nullptr;
}

// A location for the inserted call: a call without one in a function with
// debug info fails the verifier once the callee is inlinable.
static DebugLoc checkLocation(Function &F) {
  for (Instruction &I : F.getEntryBlock())
    if (I.getDebugLoc())
      return I.getDebugLoc();
  if (DISubprogram *SP = F.getSubprogram())
    return DILocation::get(F.getContext(), SP->getScopeLine(), 0, SP);
  return DebugLoc();
}

IdleCopy addIdleCopy(Function &F, FunctionCallee Enabled) {
  SmallVector<BasicBlock *, 32> Original;
  for (BasicBlock &BB : F)
    Original.push_back(&BB);
  // Function arguments are not in the map: the copy uses them as they are.
  ValueToValueMapTy Map;
  SmallVector<BasicBlock *, 32> Copies;
  for (BasicBlock *BB : Original) {
    BasicBlock *Copy = CloneBasicBlock(BB, Map, ".prlx.idle", &F);
    Map[BB] = Copy;
    Copies.push_back(Copy);
  }
  remapInstructionsInBlocks(Copies, Map);

  BasicBlock *Instrumented = Original.front();
  auto *Idle = cast<BasicBlock>(Map[Instrumented]);
  DebugLoc Loc = checkLocation(F);
  BasicBlock *Check =
      BasicBlock::Create(F.getContext(), "prlx.check", &F, Instrumented);
  IRBuilder<> B(Check);
  B.SetCurrentDebugLocation(Loc);
  Value *On = B.CreateCall(Enabled, {}, "prlx.enabled");
  B.CreateCondBr(B.CreateICmpNE(On, B.getInt32(0), "prlx.on"), Instrumented,
                 Idle);
  return {Check, Instrumented, Idle};
}

void finishIdleCopy(const IdleCopy &Copy) {
  // Before the check's call, in their order: the entry block starts with
  // its allocas, as clang emits them.
  Instruction *Call = &Copy.Check->front();
  for (BasicBlock *Entry : {Copy.Instrumented, Copy.Idle}) {
    SmallVector<AllocaInst *, 8> Static;
    for (Instruction &I : *Entry)
      if (auto *AI = dyn_cast<AllocaInst>(&I))
        if (isa<ConstantInt>(AI->getArraySize()))
          Static.push_back(AI);
    for (AllocaInst *AI : Static)
      AI->moveBefore(*Copy.Check, Call->getIterator());
  }
}

} // namespace prlx
