#include "InlineAsmSites.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/InlineAsm.h"

#include <string>

using namespace llvm;

namespace prlx {

namespace {

// The template without `//` and `/* */` comments (Triton writes none, but
// hand-written asm does, and `// @$12` must not read as a guard).
std::string stripComments(StringRef T) {
  std::string Out;
  Out.reserve(T.size());
  for (size_t I = 0; I < T.size();) {
    if (T.substr(I).starts_with("//")) {
      size_t End = T.find('\n', I);
      I = End == StringRef::npos ? T.size() : End;
    } else if (T.substr(I).starts_with("/*")) {
      size_t End = T.find("*/", I + 2);
      I = End == StringRef::npos ? T.size() : End + 2;
      Out.push_back(' ');
    } else {
      Out.push_back(T[I++]);
    }
  }
  return Out;
}

// `$N`, `${N}` or `${N:modifier}` -> N; anything else -> -1.
int operandNumber(StringRef S) {
  S = S.trim();
  if (!S.consume_front("$"))
    return -1;
  if (S.consume_front("{")) {
    size_t End = S.find_first_of(":}");
    if (End == StringRef::npos)
      return -1;
    S = S.substr(0, End);
  }
  unsigned N;
  if (S.empty() || !all_of(S, isDigit) || S.getAsInteger(10, N))
    return -1;
  return static_cast<int>(N);
}

// Operands split at top-level commas (not inside `{ }` or `[ ]`).
SmallVector<StringRef, 4> splitOperands(StringRef S) {
  SmallVector<StringRef, 4> Out;
  int Depth = 0;
  size_t Start = 0;
  for (size_t I = 0; I < S.size(); ++I) {
    char C = S[I];
    if (C == '{' || C == '[')
      ++Depth;
    else if ((C == '}' || C == ']') && Depth > 0)
      --Depth;
    else if (C == ',' && Depth == 0) {
      Out.push_back(S.slice(Start, I).trim());
      Start = I + 1;
    }
  }
  StringRef Last = S.substr(Start).trim();
  if (!Last.empty())
    Out.push_back(Last);
  return Out;
}

// A value operand: `$N`, or the first element of a vector `{ $N, ... }`.
int valueOperand(StringRef S) {
  S = S.trim();
  if (S.consume_front("{"))
    S = S.take_until([](char C) { return C == ',' || C == '}'; });
  return operandNumber(S);
}

// An address operand `[ $N ]`, `[ $N + off ]`, `[$N+-8]`.
int addressOperand(StringRef S) {
  S = S.trim();
  if (!S.consume_front("["))
    return -1;
  return operandNumber(S.ltrim().take_until(
      [](char C) { return C == '+' || C == '-' || C == ']' || isSpace(C); }));
}

bool isStateSpace(StringRef Part) {
  for (StringRef Space : {"global", "shared", "local", "param", "const"})
    if (Part.starts_with(Space))
      return true;
  return false;
}

bool matches(const AsmSitePattern &P, ArrayRef<StringRef> Parts) {
  if (Parts.empty() || Parts[0] != P.Opcode)
    return false;
  if (!P.Space)
    return true;
  StringRef Want(P.Space);
  ArrayRef<StringRef> Qualifiers = Parts.drop_front();
  if (Want.empty()) // generic: no state space at all
    return none_of(Qualifiers, isStateSpace);
  return any_of(Qualifiers, [&](StringRef Q) { return Q.starts_with(Want); });
}

// Leading scope braces and a label (`L0:`, never `shared::cta`).
StringRef stripStatementPrefix(StringRef S) {
  while (true) {
    S = S.ltrim();
    if (S.consume_front("{") || S.consume_front("}"))
      continue;
    size_t Colon = S.find(':');
    if (Colon != StringRef::npos && Colon > 0 &&
        (Colon + 1 >= S.size() || S[Colon + 1] != ':') &&
        all_of(S.take_front(Colon),
               [](char C) { return isAlnum(C) || C == '_' || C == '$'; }) &&
        !isDigit(S[0]))
      S = S.substr(Colon + 1);
    else
      return S;
  }
}

} // namespace

std::vector<PtxSiteStatement> matchPtxSiteStatements(StringRef Template) {
  std::vector<PtxSiteStatement> Out;
  std::string Text = stripComments(Template);
  SmallVector<StringRef, 8> Statements;
  StringRef(Text).split(Statements, ';', -1, /*KeepEmpty=*/false);
  for (StringRef S : Statements) {
    S = stripStatementPrefix(S);
    PtxSiteStatement St;
    if (S.consume_front("@")) {
      St.GuardNegated = S.consume_front("!");
      StringRef Guard = S.take_until(isSpace);
      S = S.drop_front(Guard.size()).ltrim();
      St.GuardOperand = operandNumber(Guard);
      St.GuardInternal = St.GuardOperand < 0;
    }
    StringRef Mnemonic = S.take_until(isSpace);
    StringRef Operands = S.drop_front(Mnemonic.size());
    SmallVector<StringRef, 8> Parts;
    Mnemonic.split(Parts, '.');
    for (unsigned I = 0; I < NumAsmSitePatterns; ++I) {
      const AsmSitePattern &P = AsmSitePatterns[I];
      if (!matches(P, Parts))
        continue;
      St.Pattern = &P;
      SmallVector<StringRef, 4> Ops = splitOperands(Operands);
      auto At = [&](int K) {
        return K >= 0 && static_cast<size_t>(K) < Ops.size() ? Ops[K]
                                                               : StringRef();
      };
      StringRef Value = At(P.ValueOperand);
      if (Value.trim() == "_" && P.FallbackOperand >= 0)
        Value = At(P.FallbackOperand);
      St.ValueOperand = valueOperand(Value);
      // The address is the first `[...]` operand.
      for (StringRef Op : Ops)
        if (Op.starts_with("[")) {
          St.AddressOperand = addressOperand(Op);
          break;
        }
      Out.push_back(St);
      break;
    }
  }
  return Out;
}

std::optional<AsmOperandRef> asmOperandRef(const CallBase &Call, unsigned N) {
  const auto *IA = dyn_cast<InlineAsm>(Call.getCalledOperand());
  if (!IA)
    return std::nullopt;
  // Operands are numbered in constraint order, clobbers excluded; direct
  // outputs are the call's value(s), inputs and indirect outputs take one
  // argument each.
  unsigned OperandNo = 0, ArgNo = 0, OutputNo = 0;
  for (const InlineAsm::ConstraintInfo &C : IA->ParseConstraints()) {
    if (C.Type == InlineAsm::isClobber)
      continue;
    bool Direct = C.Type == InlineAsm::isOutput && !C.isIndirect;
    if (OperandNo == N) {
      if (Direct)
        return AsmOperandRef{true, OutputNo, false};
      if (ArgNo >= Call.arg_size())
        return std::nullopt;
      return AsmOperandRef{false, ArgNo, C.Type == InlineAsm::isOutput};
    }
    if (Direct)
      ++OutputNo;
    else
      ++ArgNo;
    ++OperandNo;
  }
  return std::nullopt;
}

Type *asmOperandType(const CallBase &Call, AsmOperandRef Ref) {
  if (!Ref.IsOutput)
    return Call.getArgOperand(Ref.Index)->getType();
  Type *T = Call.getType();
  if (auto *ST = dyn_cast<StructType>(T))
    return Ref.Index < ST->getNumElements() ? ST->getElementType(Ref.Index)
                                            : nullptr;
  return Ref.Index == 0 && !T->isVoidTy() ? T : nullptr;
}

} // namespace prlx
