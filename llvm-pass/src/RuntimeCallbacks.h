// The device runtime's entry points, named and typed in one place. Every
// argument is an i32 so the CUDA C / HIP definitions in device-rt/ are plain
// `unsigned` parameters. Keep in sync with device-rt/include/prlx_rt.h.
#pragma once

#include "llvm/IR/Module.h"

namespace prlx {

namespace callback {
// (site, cond): the runtime ballots cond over the active lanes.
inline constexpr const char *Branch = "__prlx_record_branch";
// (site, value): the leader lane's switch value.
inline constexpr const char *Switch = "__prlx_record_switch";
// (site, value): the leader lane's value; one function per event type.
inline constexpr const char *Atomic = "__prlx_record_atomic";
inline constexpr const char *SharedStore = "__prlx_record_shmem_store";
inline constexpr const char *GlobalStore = "__prlx_record_global_store";
// (site, is_entry)
inline constexpr const char *Func = "__prlx_record_func";
// (site, lhs, rhs, predicate): per-lane compare operands, snapshot ring.
inline constexpr const char *Snapshot = "__prlx_record_snapshot";
// () -> i32: 1 while the module is being captured, else 0 (IdleCopy.cpp).
inline constexpr const char *Enabled = "__prlx_record_enabled";
} // namespace callback

// Declares each callback on first use, reusing any declaration or definition
// already in the module (the runtime linked in before the pass) rather than
// letting LLVM rename a duplicate to `__prlx_record_branch.1`. Callbacks that
// are never used are never declared, so an uninstrumented module is unchanged.
class RuntimeCallbacks {
public:
  explicit RuntimeCallbacks(llvm::Module &M) : M(M) {}

  llvm::FunctionCallee branch() { return get(callback::Branch, 2); }
  llvm::FunctionCallee switchValue() { return get(callback::Switch, 2); }
  llvm::FunctionCallee atomic() { return get(callback::Atomic, 2); }
  llvm::FunctionCallee sharedStore() { return get(callback::SharedStore, 2); }
  llvm::FunctionCallee globalStore() { return get(callback::GlobalStore, 2); }
  llvm::FunctionCallee func() { return get(callback::Func, 2); }
  llvm::FunctionCallee snapshot() { return get(callback::Snapshot, 4); }
  llvm::FunctionCallee enabled();

private:
  llvm::FunctionCallee get(const char *Name, unsigned NumI32Args);

  llvm::Module &M;
};

} // namespace prlx
