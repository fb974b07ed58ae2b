// Command-line options of the prlx-instrument pass (cl::opt, so they work as
// `opt -prlx-...` and as `clang -mllvm -prlx-...`).
#pragma once

#include "llvm/Support/CommandLine.h"

#include <string>

namespace prlx {

extern llvm::cl::opt<std::string> FilterOpt;
extern llvm::cl::opt<bool> InstrumentGlobalStores;
extern llvm::cl::opt<bool> InstrumentFuncEntryExit;
extern llvm::cl::opt<bool> Snapshots;
extern llvm::cl::opt<std::string> SitesJsonPath;
extern llvm::cl::opt<std::string> TargetOverride;
extern llvm::cl::opt<unsigned> SiteIdMask;

} // namespace prlx
