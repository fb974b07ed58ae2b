#include "SiteTableIO.h"

#include "Options.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Transforms/Utils/ModuleUtils.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <tuple>

using namespace llvm;

namespace prlx {

json::Array sitesToJson(const std::vector<SiteInfo> &Sites) {
  json::Array Out;
  for (const SiteInfo &S : Sites) {
    Out.push_back(json::Object{
        {"site_id", static_cast<int64_t>(S.Id)},
        {"filename", S.Loc.File.empty() ? std::string("unknown") : S.Loc.File},
        {"function", S.Loc.Function},
        {"line", static_cast<int64_t>(S.Loc.Line)},
        {"column", static_cast<int64_t>(S.Loc.Column)},
        {"event_type", static_cast<int64_t>(S.Kind)},
        {"ordinal", static_cast<int64_t>(S.Ordinal)},
        {"kind", siteKindName(S.Kind)},
        {"rehash", static_cast<int64_t>(S.Rehash)},
    });
  }
  return Out;
}

std::string sitesJsonPath() {
  std::string Path = SitesJsonPath;
  if (Path.empty())
    if (const char *Env = std::getenv("PRLX_SITES"))
      Path = Env;
  if (Path.empty())
    Path = "prlx-sites.json";
  if (Path == "none")
    return "";
  return Path;
}

namespace {

// Sort key: where the site is in the source, then the id as a tie-break.
using EntryKey = std::tuple<std::string, std::string, int64_t, int64_t,
                            int64_t, int64_t, int64_t>;

EntryKey keyOf(const json::Value &V) {
  const json::Object *O = V.getAsObject();
  auto Str = [&](StringRef K) {
    std::optional<StringRef> S = O ? O->getString(K) : std::nullopt;
    return S ? S->str() : std::string();
  };
  auto Int = [&](StringRef K) {
    std::optional<int64_t> I = O ? O->getInteger(K) : std::nullopt;
    return I ? *I : int64_t(-1);
  };
  return {Str("filename"), Str("function"), Int("line"), Int("column"),
          Int("event_type"), Int("ordinal"), Int("site_id")};
}

// Holds an advisory lock on `<path>.lock` while the table is read and replaced,
// so parallel compilations merging into one file do not lose each other's sites.
class FileLock {
public:
  explicit FileLock(const std::string &Path) : LockPath(Path + ".lock") {}
  Error acquire() {
    if (std::error_code EC = sys::fs::openFileForWrite(
            LockPath, FD, sys::fs::CD_OpenAlways, sys::fs::OF_None))
      return createStringError(EC, "cannot open lock file %s: %s",
                               LockPath.c_str(), EC.message().c_str());
    if (std::error_code EC =
            sys::fs::tryLockFile(FD, std::chrono::milliseconds(60000)))
      return createStringError(EC, "cannot lock %s: %s", LockPath.c_str(),
                               EC.message().c_str());
    Locked = true;
    return Error::success();
  }
  ~FileLock() {
    if (Locked)
      (void)sys::fs::unlockFile(FD);
    if (FD >= 0)
      (void)sys::Process::SafelyCloseFileDescriptor(FD);
  }

private:
  std::string LockPath;
  int FD = -1;
  bool Locked = false;
};

} // namespace

Error mergeIntoFile(const std::string &Path, const std::vector<SiteInfo> &Sites,
                    const StringSet<> &ModuleFunctions) {
  FileLock Lock(Path);
  if (Error E = Lock.acquire())
    return E;

  json::Array Merged;
  if (sys::fs::exists(Path)) {
    ErrorOr<std::unique_ptr<MemoryBuffer>> Buf = MemoryBuffer::getFile(Path);
    if (!Buf)
      return createStringError(Buf.getError(), "cannot read %s: %s",
                               Path.c_str(), Buf.getError().message().c_str());
    StringRef Text = (*Buf)->getBuffer();
    if (!Text.trim().empty()) {
      Expected<json::Value> Old = json::parse(Text);
      if (!Old)
        return createStringError(inconvertibleErrorCode(),
                                 "%s is not valid JSON (%s); not overwriting it",
                                 Path.c_str(),
                                 toString(Old.takeError()).c_str());
      json::Array *OldSites = Old->getAsArray();
      if (!OldSites)
        return createStringError(inconvertibleErrorCode(),
                                 "%s: expected a JSON array of sites; not "
                                 "overwriting it",
                                 Path.c_str());
      for (json::Value &Entry : *OldSites) {
        const json::Object *O = Entry.getAsObject();
        std::optional<StringRef> Fn = O ? O->getString("function") : std::nullopt;
        if (Fn && ModuleFunctions.contains(*Fn))
          continue; // this module's function: replaced by the new sites
        Merged.push_back(std::move(Entry));
      }
    }
  }

  // Ids are unique within a module by construction; across modules a clash
  // can only be reported, since the other module is already built.
  std::map<int64_t, std::string> Owner;
  for (const json::Value &V : Merged)
    if (const json::Object *O = V.getAsObject())
      if (std::optional<int64_t> Id = O->getInteger("site_id"))
        Owner[*Id] = O->getString("function").value_or("?").str();
  for (const SiteInfo &S : Sites) {
    auto It = Owner.find(S.Id);
    if (It != Owner.end())
      errs() << "[prlx] warning: site id " << S.Id << " of " << S.Loc.Function
             << " also belongs to " << It->second << " in " << Path << "\n";
  }

  for (json::Value &V : sitesToJson(Sites))
    Merged.push_back(std::move(V));
  std::vector<json::Value> Sorted(Merged.begin(), Merged.end());
  std::sort(Sorted.begin(), Sorted.end(),
                   [](const json::Value &A, const json::Value &B) {
                     return keyOf(A) < keyOf(B);
                   });
  json::Array Out(std::move(Sorted));

  SmallString<256> Tmp(Path);
  Tmp += ".tmp";
  {
    std::error_code EC;
    raw_fd_ostream OS(Tmp, EC, sys::fs::OF_Text);
    if (EC)
      return createStringError(EC, "cannot write %s: %s", Tmp.c_str(),
                               EC.message().c_str());
    OS << formatv("{0:2}", json::Value(std::move(Out))) << "\n";
    OS.close();
    if (OS.has_error())
      return createStringError(OS.error(), "cannot write %s: %s", Tmp.c_str(),
                               OS.error().message().c_str());
  }
  if (std::error_code EC = sys::fs::rename(Tmp, Path))
    return createStringError(EC, "cannot rename %s to %s: %s", Tmp.c_str(),
                             Path.c_str(), EC.message().c_str());
  return Error::success();
}

void embedSiteTable(Module &M, const std::vector<SiteInfo> &Sites) {
  std::string Text;
  raw_string_ostream OS(Text);
  OS << json::Value(sitesToJson(Sites));
  OS.flush();

  LLVMContext &Ctx = M.getContext();
  Constant *Init = ConstantDataArray::getString(Ctx, Text, /*AddNull=*/true);
  if (GlobalVariable *Clash = M.getNamedGlobal(EmbeddedTableName)) {
    // Not ours (the pass never runs twice on a module): move it aside so the
    // capture side finds the table under its documented name.
    errs() << "[prlx] warning: module already defines " << EmbeddedTableName
           << "; renaming it\n";
    Clash->setName(Twine(EmbeddedTableName) + ".user");
  }
  auto *GV = new GlobalVariable(M, Init->getType(), /*isConstant=*/true,
                                GlobalValue::ExternalLinkage, Init,
                                EmbeddedTableName, nullptr,
                                GlobalValue::NotThreadLocal, GlobalAddrSpace);
  GV->setAlignment(Align(1));
  appendToUsed(M, {GV});
}

} // namespace prlx
