// The site table outside the pass: the prlx-sites.json file (PRLX's schema)
// and the `__prlx_sites` global embedded in the module.
#pragma once

#include "SiteTable.h"
#include "Target.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <string>
#include <vector>

namespace prlx {

// Name of the embedded table (see llvm-pass/README.md, "Embedded table").
inline constexpr const char *EmbeddedTableName = "__prlx_sites";

// One JSON object per site: site_id, filename, function, line, column,
// event_type, ordinal (PRLX's schema), plus kind and rehash.
llvm::json::Array sitesToJson(const std::vector<SiteInfo> &Sites);

// The path the table is written to: -prlx-sites-json, else $PRLX_SITES, else
// "prlx-sites.json"; empty when disabled with "none".
std::string sitesJsonPath();

// Merges `Sites` into the JSON array at `Path` under an advisory lock:
// entries of functions in `ModuleFunctions` (every function this module
// defines) are replaced, all others are kept; the result is sorted and
// written atomically (temp file + rename).
llvm::Error mergeIntoFile(const std::string &Path,
                          const std::vector<SiteInfo> &Sites,
                          const llvm::StringSet<> &ModuleFunctions);

// Adds `@__prlx_sites = addrspace(1) constant [N x i8]`: this module's table
// as compact JSON followed by one NUL byte, kept alive by llvm.used.
void embedSiteTable(llvm::Module &M, const std::vector<SiteInfo> &Sites);

} // namespace prlx
