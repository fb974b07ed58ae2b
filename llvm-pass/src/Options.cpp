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

cl::opt<bool> IdleCopyOpt(
    "prlx-idle-copy",
    cl::desc("Give each instrumented function an uninstrumented copy of its "
             "body, run when the module is not being captured (one load and "
             "one branch per call instead of a branch per site visit; the "
             "function's code is about twice the size)"),
    cl::init(true));

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

// ---- Inline PTX asm sites ------------------------------------------------
//
// Triton emits its atomics (`@$3 atom.global.gpu.acq_rel.add.u32 $0, [ $1 + 0 ], $2;`)
// and many stores (`@$2 st.shared::cta.b32 [ $0 + 0 ], $1;`,
// `st.global.v4.b32 [ $4 + 0 ], { $0, $1, $2, $3 };`) as inline PTX, which
// the IR-level site rules never see. Each statement of an asm template
// (`;`-separated, comments and `{ }` scopes ignored) matching a row below is a
// site of its own, at the asm call's location, with the event kind of the
// row. The recorded value is the leader lane's first element of the value
// operand: for `atom` the result the asm returns (what the atomic read), for
// `red` and stores the value written (as for LLVM atomicrmw and stores).
// A statement guarded by `@$N` / `@!$N` (an i1 call operand, Triton's mask)
// records only in the lanes where the guard holds.
//
// Skip rules (the statement is not a site):
//  - the module is not NVPTX (the templates are PTX);
//  - -prlx-asm-sites=false, or a GlobalStore row without
//    -prlx-instrument-global-stores;
//  - the guard is not an operand (`@%p`, a predicate computed inside the
//    asm), or is an operand that is not i1; a constant-false guard;
//  - the value operand is not `$N` (an immediate or an asm-local register),
//    is an indirect (memory) output, or has a type the runtime cannot record
//    as one word even after taking its first vector element;
//  - `st` to .local/.param (not shared or global memory), a generic `st`
//    whose address is not `[$N...]` or does not point into shared/global;
//  - any asm that is not a plain `call` (invoke / callbr).
// Ids use the same key as every site (file, function, line, column, kind,
// ordinal); two sites in one asm differ by ordinal, in template order.

namespace prlx {

cl::opt<bool> AsmSites(
    "prlx-asm-sites",
    cl::desc("Record inline PTX atomics (atom/red) and shared stores (st.shared, "
             "stmatrix) as Atomic / SharedMemStore sites, and st.global with "
             "-prlx-instrument-global-stores"),
    cl::init(true));

const AsmSitePattern AsmSitePatterns[] = {
    // atom{.sem}{.scope}{.space}.op.type d, [a], b{, c}: d is the value read.
    {"atom", nullptr, AsmSiteClass::Atomic, 0, 2},
    // red{.sem}{.scope}{.space}.op.type [a], b: no result; b is written.
    {"red", nullptr, AsmSiteClass::Atomic, 1, -1},
    // st{.async,.weak,.volatile,.relaxed.scope,...}.shared{::cta,::cluster}{.vN}.type [a], b
    {"st", "shared", AsmSiteClass::SharedStore, 1, -1},
    // stmatrix.sync.aligned.shape.num{.trans}.shared{::cta}.b16 [p], {r...}
    {"stmatrix", "shared", AsmSiteClass::SharedStore, 1, -1},
    {"st", "global", AsmSiteClass::GlobalStore, 1, -1},
    // generic st [a], b
    {"st", "", AsmSiteClass::ByAddress, 1, -1},
};
const unsigned NumAsmSitePatterns =
    sizeof(AsmSitePatterns) / sizeof(AsmSitePatterns[0]);

} // namespace prlx
