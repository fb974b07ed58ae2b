#include "Target.h"

#include "Options.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/IR/Function.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Triple.h"

using namespace llvm;

namespace prlx {

static GpuTarget fromName(StringRef Name) {
  if (Name.contains("nvptx"))
    return GpuTarget::NVPTX;
  if (Name.contains("amdgcn"))
    return GpuTarget::AMDGPU;
  return GpuTarget::None;
}

GpuTarget detectTarget(const Module &M) {
  // LLVM 21 turned Module::getTargetTriple() into a Triple.
#if LLVM_VERSION_MAJOR >= 21
  std::string Triple = M.getTargetTriple().str();
#else
  std::string Triple = M.getTargetTriple();
#endif
  if (!Triple.empty())
    return fromName(Triple);
  if (TargetOverride.empty())
    return GpuTarget::None;
  GpuTarget T = fromName(TargetOverride);
  if (T == GpuTarget::None)
    errs() << "[prlx] warning: -prlx-target='" << TargetOverride
           << "' is neither nvptx nor amdgcn; module left uninstrumented\n";
  return T;
}

const char *targetName(GpuTarget T) {
  switch (T) {
  case GpuTarget::NVPTX:
    return "nvptx";
  case GpuTarget::AMDGPU:
    return "amdgcn";
  case GpuTarget::None:
    break;
  }
  return "none";
}

bool dropAmdgpuImplicitInputPromises(Module &M) {
  bool Changed = false;
  for (Function &F : M) {
    if (F.isDeclaration())
      continue;
    SmallVector<StringRef, 16> Promises;
    for (const Attribute &A : F.getAttributes().getFnAttrs())
      if (A.isStringAttribute() && A.getKindAsString().starts_with("amdgpu-no-"))
        Promises.push_back(A.getKindAsString());
    for (StringRef Kind : Promises)
      F.removeFnAttr(Kind);
    Changed |= !Promises.empty();
  }
  return Changed;
}

} // namespace prlx
