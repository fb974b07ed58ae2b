// Plugin entry point: registers `prlx-instrument` for `opt -passes=` and at
// OptimizerLast for `clang -fpass-plugin=`.

#include "FunctionFilter.h"
#include "Instrumenter.h"
#include "Options.h"
#include "SiteTable.h"
#include "SiteTableIO.h"
#include "Target.h"

#include "llvm/Config/llvm-config.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/raw_ostream.h"

// LLVM 22 moved the plugin header.
#if __has_include("llvm/Plugins/PassPlugin.h")
#include "llvm/Plugins/PassPlugin.h"
#else
#include "llvm/Passes/PassPlugin.h"
#endif

using namespace llvm;

namespace prlx {

static cl::opt<bool> Verbose("prlx-verbose",
                             cl::desc("Report per-function site counts and "
                                      "skipped functions on stderr"),
                             cl::init(false));

// Named metadata marking a module as done, so a second run (opt after clang,
// or the pass twice in one pipeline) does not record every event twice.
static constexpr const char *DoneMarker = "prlx.instrumented";

struct PrlxInstrumentPass : PassInfoMixin<PrlxInstrumentPass> {
  PreservedAnalyses run(Module &M, ModuleAnalysisManager &) {
    if (M.getNamedMetadata(DoneMarker))
      return PreservedAnalyses::all();
    GpuTarget Target = detectTarget(M);
    if (Target == GpuTarget::None)
      return PreservedAnalyses::all();

    InstrumentOptions Opts;
    Opts.GlobalStores = InstrumentGlobalStores;
    Opts.FuncEntryExit = InstrumentFuncEntryExit;
    Opts.Snapshots = Snapshots;
    Opts.Verbose = Verbose;
    Opts.AsmSites = AsmSites;
    Opts.IdleCopies = IdleCopyOpt;

    SiteTable Table(SiteIdMask);
    Instrumenter Pass(M, Target, FunctionFilter::fromEnvironmentAndOptions(),
                      Opts, Table);
    bool Changed = Pass.run();
    if (Changed && Target == GpuTarget::AMDGPU)
      dropAmdgpuImplicitInputPromises(M);
    M.getOrInsertNamedMetadata(DoneMarker);
    if (!Table.sites().empty())
      embedSiteTable(M, Table.sites());

    std::string Path = sitesJsonPath();
    if (!Path.empty())
      if (Error E = mergeIntoFile(Path, Table.sites(), Pass.definedFunctions()))
        M.getContext().emitError("[prlx] site table: " + toString(std::move(E)));
    if (Verbose)
      errs() << "[prlx] " << targetName(Target) << " module "
             << M.getModuleIdentifier() << ": " << Table.sites().size()
             << " sites\n";
    return Changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
  }

  // Runs at -O0 and on optnone functions too: capture must not depend on -O.
  static bool isRequired() { return true; }
};

static void registerCallbacks(PassBuilder &PB) {
  PB.registerPipelineParsingCallback(
      [](StringRef Name, ModulePassManager &MPM,
         ArrayRef<PassBuilder::PipelineElement>) {
        if (Name != "prlx-instrument")
          return false;
        MPM.addPass(PrlxInstrumentPass());
        return true;
      });
#if LLVM_VERSION_MAJOR >= 20
  PB.registerOptimizerLastEPCallback(
      [](ModulePassManager &MPM, OptimizationLevel, ThinOrFullLTOPhase) {
        MPM.addPass(PrlxInstrumentPass());
      });
#else
  PB.registerOptimizerLastEPCallback(
      [](ModulePassManager &MPM, OptimizationLevel) {
        MPM.addPass(PrlxInstrumentPass());
      });
#endif
}

} // namespace prlx

extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo llvmGetPassPluginInfo() {
  return {LLVM_PLUGIN_API_VERSION, "PrlxPass", LLVM_VERSION_STRING,
          prlx::registerCallbacks};
}
