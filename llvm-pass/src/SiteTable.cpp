#include "SiteTable.h"

#include "llvm/IR/DebugInfoMetadata.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/Instructions.h"

#include <string>

using namespace llvm;

namespace prlx {

const char *siteKindName(SiteKind K) {
  switch (K) {
  case SiteKind::Branch:
    return "Branch";
  case SiteKind::SharedStore:
    return "SharedMemStore";
  case SiteKind::Atomic:
    return "Atomic";
  case SiteKind::FuncEntry:
    return "FuncEntry";
  case SiteKind::FuncExit:
    return "FuncExit";
  case SiteKind::Switch:
    return "Switch";
  case SiteKind::GlobalStore:
    return "GlobalStore";
  }
  return "Unknown";
}

uint32_t fnv1a32(StringRef Bytes, uint32_t Hash) {
  for (unsigned char C : Bytes) {
    Hash ^= C;
    Hash *= 16777619u;
  }
  return Hash;
}

// A line-bearing location for I. Optimisation leaves some branches (loop
// latches, merged exits) without one; they then borrow it from what decided
// them: the condition's instruction, else the nearest earlier instruction of
// the block that has a line.
static const DILocation *lineOf(const Instruction &I) {
  auto WithLine = [](const Instruction *X) -> const DILocation * {
    const DILocation *DL = X ? X->getDebugLoc().get() : nullptr;
    return DL && DL->getLine() != 0 ? DL : nullptr;
  };
  if (const DILocation *DL = WithLine(&I))
    return DL;
  const Value *Cond = nullptr;
  if (const auto *Br = dyn_cast<BranchInst>(&I))
    Cond = Br->isConditional() ? Br->getCondition() : nullptr;
  else if (const auto *Sw = dyn_cast<SwitchInst>(&I))
    Cond = Sw->getCondition();
  if (const DILocation *DL = WithLine(dyn_cast_or_null<Instruction>(Cond)))
    return DL;
  for (const Instruction *P = I.getPrevNode(); P; P = P->getPrevNode())
    if (const DILocation *DL = WithLine(P))
      return DL;
  return nullptr;
}

SourceLocation SiteTable::locationOf(const Instruction &I) {
  SourceLocation Loc;
  Loc.Function = I.getFunction()->getName().str();
  if (const DILocation *DL = lineOf(I)) {
    Loc.File = DL->getFilename().str();
    Loc.Line = DL->getLine();
    Loc.Column = DL->getColumn();
  }
  return Loc;
}

SourceLocation SiteTable::entryLocationOf(const Function &F) {
  SourceLocation Loc;
  Loc.Function = F.getName().str();
  if (const DISubprogram *SP = F.getSubprogram()) {
    Loc.File = SP->getFilename().str();
    Loc.Line = SP->getLine();
  }
  return Loc;
}

// The name after the last '/' or '\\' (ptx-instrument's `file_key`).
static StringRef fileKey(StringRef File) {
  size_t Slash = File.find_last_of("/\\");
  return Slash == StringRef::npos ? File : File.drop_front(Slash + 1);
}

uint32_t SiteTable::hashKey(const SourceLocation &Loc, SiteKind Kind,
                            unsigned Ordinal, unsigned Salt) const {
  // Fields joined by 0x1F (unit separator), which appears in no file or symbol
  // name, so ("a", "bc") and ("ab", "c") hash differently.
  // The file enters as its name without directories (fileKey), so where the
  // build ran does not change an id; the site map keeps the full path.
  std::string Key;
  Key.reserve(Loc.File.size() + Loc.Function.size() + 32);
  Key += fileKey(Loc.File);
  Key += '\x1f';
  Key += Loc.Function;
  Key += '\x1f';
  Key += std::to_string(Loc.Line);
  Key += '\x1f';
  Key += std::to_string(Loc.Column);
  Key += '\x1f';
  Key += std::to_string(static_cast<unsigned>(Kind));
  Key += '\x1f';
  Key += std::to_string(Ordinal);
  if (Salt != 0) {
    Key += "\x1fsalt";
    Key += std::to_string(Salt);
  }
  return fnv1a32(Key) & IdMask;
}

uint32_t SiteTable::add(SourceLocation Loc, SiteKind Kind) {
  std::string OrdinalKey = Loc.File + '\x1f' + Loc.Function + '\x1f' +
                           std::to_string(Loc.Line) + '\x1f' +
                           std::to_string(Loc.Column) + '\x1f' +
                           std::to_string(static_cast<unsigned>(Kind));
  unsigned Ordinal = NextOrdinal[OrdinalKey]++;

  // Collision: the earlier site keeps its id; this one re-hashes its key with
  // an increasing salt until the id is free. Bounded by the id space, which a
  // module never comes close to filling (the test mask is at least 2^8).
  unsigned Salt = 0;
  uint32_t Id = hashKey(Loc, Kind, Ordinal, Salt);
  while (IndexById.count(Id) != 0 && Salt < (1u << 20))
    Id = hashKey(Loc, Kind, Ordinal, ++Salt);

  SiteInfo Info;
  Info.Id = Id;
  Info.Loc = std::move(Loc);
  Info.Kind = Kind;
  Info.Ordinal = Ordinal;
  Info.Rehash = Salt;
  IndexById.emplace(Id, Sites.size());
  Sites.push_back(std::move(Info));
  return Id;
}

} // namespace prlx
