#include "RuntimeCallbacks.h"

#include "llvm/IR/DerivedTypes.h"

using namespace llvm;

namespace prlx {

FunctionCallee RuntimeCallbacks::get(const char *Name, unsigned NumI32Args) {
  LLVMContext &Ctx = M.getContext();
  SmallVector<Type *, 4> Params(NumI32Args, Type::getInt32Ty(Ctx));
  FunctionType *Ty = FunctionType::get(Type::getVoidTy(Ctx), Params, false);
  FunctionCallee Callee = M.getOrInsertFunction(Name, Ty);
  // Ballots and shuffles inside: no pass may move a call across control flow.
  if (auto *F = dyn_cast<Function>(Callee.getCallee()))
    F->addFnAttr(Attribute::Convergent);
  return Callee;
}

FunctionCallee RuntimeCallbacks::enabled() {
  LLVMContext &Ctx = M.getContext();
  FunctionType *Ty = FunctionType::get(Type::getInt32Ty(Ctx), {}, false);
  // A plain load of the descriptor: not convergent, so the optimiser may
  // merge it with the runtime's own loads once inlined.
  return M.getOrInsertFunction(callback::Enabled, Ty);
}

} // namespace prlx
