#include "Options.h"

using namespace llvm;

namespace prlx {

cl::opt<std::string> FilterOpt(
    "prlx-filter",
    cl::desc("Comma-separated globs; only functions matching one are "
             "instrumented (combined with the PRLX_FILTER environment variable)"),
    cl::init(""));

cl::opt<bool> InstrumentGlobalStores(
    "prlx-instrument-global-stores",
    cl::desc("Also record stores to global memory"), cl::init(false));

cl::opt<bool> InstrumentFuncEntryExit(
    "prlx-instrument-func-entry-exit",
    cl::desc("Also record function entry and exit"), cl::init(false));

cl::opt<bool> Snapshots(
    "prlx-snapshots",
    cl::desc("Record per-lane operands of the compare deciding each branch"),
    cl::init(false));

cl::opt<std::string> SitesJsonPath(
    "prlx-sites-json",
    cl::desc("Site table file to merge into (default: $PRLX_SITES, else "
             "prlx-sites.json in the working directory; 'none' disables)"),
    cl::init(""));

cl::opt<std::string> TargetOverride(
    "prlx-target",
    cl::desc("Treat a module with no target triple (Triton's llir) as this "
             "target: nvptx or amdgcn"),
    cl::init(""));

// Test hook: narrowing the id space forces collisions so the re-hash path can
// be exercised. Never needed in normal use.
cl::opt<unsigned> SiteIdMask(
    "prlx-site-id-mask", cl::Hidden,
    cl::desc("AND every site id hash with this mask (testing only)"),
    cl::init(0xFFFFFFFFu));

} // namespace prlx
