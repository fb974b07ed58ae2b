// Site ids: a deterministic 32-bit hash of where an instrumented instruction
// is in the source, so two builds of the same kernel agree on every id.
#pragma once

#include "llvm/ADT/StringMap.h"
#include "llvm/IR/Instruction.h"

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace prlx {

// Equal to the trace format's TraceEvent::event_type values.
enum class SiteKind : uint8_t {
  Branch = 0,
  SharedStore = 1,
  Atomic = 2,
  FuncEntry = 3,
  FuncExit = 4,
  Switch = 5,
  GlobalStore = 6,
};

const char *siteKindName(SiteKind K);

struct SourceLocation {
  std::string File;     // as the compiler was given it (DILocation filename)
  std::string Function; // the instrumented (caller) function, mangled
  unsigned Line = 0;    // 0 = no debug location
  unsigned Column = 0;
};

struct SiteInfo {
  uint32_t Id = 0;
  SourceLocation Loc;
  SiteKind Kind = SiteKind::Branch;
  // Index of this site among sites with the same location and kind: two
  // branches on one line and column get 0 and 1. With no debug location the
  // location is (function, line 0), so this is the per-function, per-kind
  // ordinal.
  unsigned Ordinal = 0;
  // How many salted re-hashes it took to find a free id (0 = plain hash).
  unsigned Rehash = 0;
};

// FNV-1a, 32-bit.
uint32_t fnv1a32(llvm::StringRef Bytes, uint32_t Hash = 2166136261u);

class SiteTable {
public:
  explicit SiteTable(uint32_t IdMask = 0xFFFFFFFFu) : IdMask(IdMask) {}

  // The location a site at `I` is keyed by.
  static SourceLocation locationOf(const llvm::Instruction &I);
  // Function entry: the subprogram's line, else line 0.
  static SourceLocation entryLocationOf(const llvm::Function &F);

  // Registers a site and returns its id, unique within this table.
  uint32_t add(SourceLocation Loc, SiteKind Kind);

  const std::vector<SiteInfo> &sites() const { return Sites; }

private:
  uint32_t hashKey(const SourceLocation &Loc, SiteKind Kind, unsigned Ordinal,
                   unsigned Salt) const;

  uint32_t IdMask;
  std::vector<SiteInfo> Sites;
  std::unordered_map<uint32_t, size_t> IndexById;
  llvm::StringMap<unsigned> NextOrdinal;
};

} // namespace prlx
