// Which functions the pass instruments: the explicit skip rules plus the
// user's PRLX_FILTER / -prlx-filter globs.
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/IR/Function.h"

#include <string>
#include <vector>

namespace prlx {

// Why a function is left alone (None: instrument it).
enum class SkipReason {
  None,
  Declaration,
  Intrinsic,
  PrlxRuntime,   // __prlx_*: the recording functions themselves
  VendorBuiltin, // __nv_*, __ocml_*, __ockl_*, __hip_*, __builtin_*, warp intrinsics
  Filtered,      // does not match PRLX_FILTER / -prlx-filter
};

const char *skipReasonName(SkipReason R);

// The identifier inside an Itanium-mangled name (`_Z9my_kernelPii` ->
// `my_kernel`); other names are returned unchanged.
llvm::StringRef baseIdentifier(llvm::StringRef Name);

// `*` matches any run of characters, `?` one character.
bool globMatch(llvm::StringRef Pattern, llvm::StringRef Text);

class FunctionFilter {
public:
  // Reads PRLX_FILTER and -prlx-filter.
  static FunctionFilter fromEnvironmentAndOptions();

  explicit FunctionFilter(std::vector<std::string> Patterns)
      : Patterns(std::move(Patterns)) {}

  SkipReason classify(const llvm::Function &F) const;
  const std::vector<std::string> &patterns() const { return Patterns; }

private:
  bool matches(llvm::StringRef Name) const;

  std::vector<std::string> Patterns;
};

} // namespace prlx
