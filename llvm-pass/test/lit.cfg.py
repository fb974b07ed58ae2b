# lit configuration for the prlx-instrument pass.
#   lit.py llvm-pass/test                 -> LLVM 19 tools, build-19 plugin
#   lit.py --param llvm=22 llvm-pass/test -> LLVM 22 tools, build-22 plugin
# Tools that are missing make their tests UNSUPPORTED, or abort the run when
# PRLX_REQUIRE_TOOLCHAIN=1 (CI).
import os
import shutil
import sys

import lit.formats

config.name = "prlx-pass"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".ll", ".test"]
config.excludes = ["Inputs"]
config.test_source_root = os.path.dirname(os.path.abspath(__file__))

llvm = lit_config.params.get("llvm", "19")
pass_dir = os.path.dirname(config.test_source_root)
repo = os.path.dirname(pass_dir)
require = os.environ.get("PRLX_REQUIRE_TOOLCHAIN") == "1"


def need(path, what):
    if path and os.path.exists(path):
        return path
    if require:
        lit_config.fatal(f"{what} not found ({path}); run scripts/setup.sh")
    return None


def tool(name):
    return need(shutil.which(name), name)


plugin = need(os.path.join(pass_dir, f"build-{llvm}", "libPrlxPass.so"),
              f"libPrlxPass.so for LLVM {llvm} (run llvm-pass/build.sh {llvm})")
if plugin is None:
    lit_config.fatal(f"build llvm-pass/build-{llvm} first (llvm-pass/build.sh {llvm})")

tools = {t: tool(f"{t}-{llvm}") for t in ["opt", "FileCheck", "llvm-link", "llc"]}
for t in ["opt", "FileCheck", "llvm-link", "llc"]:
    if tools[t] is None:
        lit_config.fatal(f"{t}-{llvm} not found; install llvm-{llvm}-tools")

# Device runtime, built by device-rt/build.sh (clang-19).
rt_dir = os.path.join(repo, "device-rt", "build")
config.substitutions.append(("%opt", f"{tools['opt']} -load-pass-plugin={plugin}"))
config.substitutions.append(("%plainopt", tools["opt"]))
config.substitutions.append(("%FileCheck", tools["FileCheck"]))
config.substitutions.append(("%llvm-link", tools["llvm-link"]))
config.substitutions.append(("%llc", tools["llc"]))
config.substitutions.append(("%plugin", plugin))
config.substitutions.append(("%python", sys.executable))
config.substitutions.append(("%rt_dir", rt_dir))
config.substitutions.append(("%device_rt", os.path.join(repo, "device-rt")))
config.substitutions.append(("%inputs", os.path.join(config.test_source_root, "Inputs")))

# clang-19 turns CUDA/HIP sources into IR for every LLVM build (LLVM 22 reads
# it); loading the plugin into clang needs the clang of the plugin's LLVM.
clang = tool("clang-19")
if clang:
    config.available_features.add("clang")
    config.substitutions.append(("%clang", clang))
plugin_clang = shutil.which(f"clang-{llvm}")
if plugin_clang:
    config.available_features.add("clang-plugin")
    config.substitutions.append(("%driver", plugin_clang))
if os.path.exists(os.path.join(rt_dir, "prlx_rt_nvptx.bc")):
    config.available_features.add("device-rt")
elif require:
    lit_config.fatal("device-rt/build is missing; run device-rt/build.sh")
ptxas = need(os.path.join(repo, ".tools", "cuda13", "nvidia", "cu13", "bin", "ptxas"), "ptxas")
if ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))
clangxx = tool("clang++-19")
if clangxx:
    config.available_features.add("clangxx")
    config.substitutions.append(("%hostcxx", clangxx))

# The pass reads these; tests set them explicitly when they mean to.
for var in ["PRLX_FILTER", "PRLX_SITES"]:
    config.environment.pop(var, None)
config.environment["PATH"] = os.environ.get("PATH", "")
