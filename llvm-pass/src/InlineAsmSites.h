// Inline PTX asm as sites: which statements of an asm template match
// Options.cpp's AsmSitePatterns, and which call operands they name.
// Purely syntactic; the Instrumenter applies the type and address rules.
#pragma once

#include "Options.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/IR/InstrTypes.h"

#include <optional>
#include <vector>

namespace prlx {

// One statement of an asm template that matched a pattern.
struct PtxSiteStatement {
  const AsmSitePattern *Pattern = nullptr;
  // `$N` operand numbers; -1 = the operand is not an asm operand (an
  // immediate, an asm-local register) or is absent.
  int ValueOperand = -1;
  int AddressOperand = -1;
  // `@$N` / `@!$N`: the guard's operand number; -1 = unguarded.
  int GuardOperand = -1;
  bool GuardNegated = false;
  // Guarded by something that is not an operand (`@%p`).
  bool GuardInternal = false;
};

// Every statement of `Template` that matches a pattern, in template order.
std::vector<PtxSiteStatement> matchPtxSiteStatements(llvm::StringRef Template);

// Where asm operand `$N` of `Call` lives: a direct output (the call's value,
// or field `Index` of its struct value) or call argument `Index`.
struct AsmOperandRef {
  bool IsOutput = false;
  unsigned Index = 0;
  bool IndirectOutput = false; // an argument that is a memory output
};
std::optional<AsmOperandRef> asmOperandRef(const llvm::CallBase &Call,
                                           unsigned N);

// The IR type of that operand.
llvm::Type *asmOperandType(const llvm::CallBase &Call, AsmOperandRef Ref);

} // namespace prlx
