#include "FunctionFilter.h"

#include "Options.h"

#include "llvm/ADT/SmallVector.h"

#include <cstdlib>

using namespace llvm;

namespace prlx {

const char *skipReasonName(SkipReason R) {
  switch (R) {
  case SkipReason::None:
    return "instrumented";
  case SkipReason::Declaration:
    return "declaration";
  case SkipReason::Intrinsic:
    return "intrinsic";
  case SkipReason::PrlxRuntime:
    return "prlx runtime";
  case SkipReason::VendorBuiltin:
    return "vendor builtin";
  case SkipReason::Filtered:
    return "filtered out";
  }
  return "unknown";
}

StringRef baseIdentifier(StringRef Name) {
  // _Z<len><identifier>..., also _ZN<len><id>... for a nested name's first part.
  if (!Name.consume_front("_Z"))
    return Name;
  Name.consume_front("N");
  size_t Digits = 0;
  while (Digits < Name.size() && Name[Digits] >= '0' && Name[Digits] <= '9')
    ++Digits;
  unsigned Len = 0;
  if (Digits == 0 || Name.substr(0, Digits).getAsInteger(10, Len) ||
      Len > Name.size() - Digits)
    return Name;
  return Name.substr(Digits, Len);
}

bool globMatch(StringRef Pattern, StringRef Text) {
  size_t P = 0, T = 0, StarP = StringRef::npos, StarT = 0;
  while (T < Text.size()) {
    if (P < Pattern.size() && (Pattern[P] == '?' || Pattern[P] == Text[T])) {
      ++P;
      ++T;
    } else if (P < Pattern.size() && Pattern[P] == '*') {
      StarP = P++;
      StarT = T;
    } else if (StarP != StringRef::npos) {
      P = StarP + 1;
      T = ++StarT;
    } else {
      return false;
    }
  }
  while (P < Pattern.size() && Pattern[P] == '*')
    ++P;
  return P == Pattern.size();
}

static void splitPatterns(StringRef List, std::vector<std::string> &Out) {
  SmallVector<StringRef, 8> Parts;
  List.split(Parts, ',', -1, /*KeepEmpty=*/false);
  for (StringRef Part : Parts) {
    Part = Part.trim();
    if (!Part.empty())
      Out.push_back(Part.str());
  }
}

FunctionFilter FunctionFilter::fromEnvironmentAndOptions() {
  std::vector<std::string> Patterns;
  if (const char *Env = std::getenv("PRLX_FILTER"))
    splitPatterns(Env, Patterns);
  splitPatterns(FilterOpt, Patterns);
  return FunctionFilter(std::move(Patterns));
}

bool FunctionFilter::matches(StringRef Name) const {
  if (Patterns.empty())
    return true;
  StringRef Base = baseIdentifier(Name);
  for (const std::string &P : Patterns)
    if (globMatch(P, Name) || globMatch(P, Base))
      return true;
  return false;
}

// Device-library and compiler-support functions: their control flow is not the
// user's, and instrumenting warp intrinsics' wrappers would record the
// recording machinery's own shuffles.
static bool isVendorBuiltin(StringRef Name) {
  static const char *const Prefixes[] = {
      "__nv_",      "__ocml_",  "__ockl_",       "__hip_",   "__builtin_",
      "__shfl",     "__ballot", "__activemask",  "__syncwarp", "__any_sync",
      "__all_sync", "__match",  "__reduce_",     "__nvvm_",  "__llvm_",
  };
  StringRef Base = baseIdentifier(Name);
  for (const char *P : Prefixes)
    if (Name.starts_with(P) || Base.starts_with(P))
      return true;
  return false;
}

SkipReason FunctionFilter::classify(const Function &F) const {
  if (F.isIntrinsic())
    return SkipReason::Intrinsic;
  if (F.isDeclaration())
    return SkipReason::Declaration;
  StringRef Name = F.getName();
  if (Name.starts_with("__prlx_") || baseIdentifier(Name).starts_with("__prlx_"))
    return SkipReason::PrlxRuntime;
  if (isVendorBuiltin(Name))
    return SkipReason::VendorBuiltin;
  if (!matches(Name))
    return SkipReason::Filtered;
  return SkipReason::None;
}

} // namespace prlx
