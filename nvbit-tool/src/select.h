// Which SASS instructions the NVBit tool instruments, and as what.
//
// Self-contained (no NVBit, no CUDA): the tool feeds it NVBit's decoded
// `Instr` fields, and the test driver (test/select_driver.cpp) feeds it
// `cuobjdump -sass` text, so the same rules are checked on real SASS here.
#pragma once

#include <cstdint>
#include <string>

namespace prlx_nvbit {

// What an instrumented instruction records. The numeric event types are the
// `.prlx` v1 ones (device-rt/src/prlx_layout.h).
enum class EventKind {
  None,         // not instrumented
  Branch,       // conditional BRA/BRX/JMP/JMX: direction, active and taken mask
  SharedStore,  // STS
  Atomic,       // ATOM, ATOMG, ATOMS, RED
  Exit,         // EXIT, RET: the warp (or some lanes) leave the function
};

// The guard predicate in front of an instruction (`@P0`, `@!UP1`, `@PT`).
struct Guard {
  bool present = false;
  int num = 7;  // 7 is PT (always true)
  bool negated = false;
  bool uniform = false;  // UPn rather than Pn
};

// A guard that always holds (none, `@PT`) or never holds (`@!PT`).
bool guard_always_true(const Guard &g);
bool guard_never_true(const Guard &g);

// The opcode's first dot-separated part: "RED.E.ADD.STRONG.GPU" -> "RED".
std::string opcode_base(const std::string &opcode);

// The rule. `opcode` is the full SASS opcode with modifiers ("BRA.CONV",
// "ATOMS.ADD"), as NVBit's Instr::getOpcode() or cuobjdump prints it.
EventKind select_event(const std::string &opcode, const Guard &guard);

// `.prlx` v1 event_type for a selected kind (Exit -> FuncExit).
uint8_t trace_event_type(EventKind kind);
const char *kind_name(EventKind kind);

// 32-bit FNV-1a, the hash `.prlx` site ids use.
uint32_t fnv1a32(const std::string &bytes, uint32_t hash = 2166136261u);

// The site id of the instruction at `offset` bytes into `function`
// (mangled name): FNV-1a of "function+0x<offset hex>". Stable across runs of
// the same binary, independent of load address.
uint32_t site_id(const std::string &function, uint32_t offset);

// One instruction line of `cuobjdump -sass` / nvdisasm output, e.g.
//   "        /*02a0*/               @P0 BRA 0x340 ;   /* 0x...47 */"
struct SassLine {
  uint32_t offset = 0;
  Guard guard;
  std::string opcode;
  std::string operands;  // the rest, up to ';'
};

// Parses an instruction line; false for anything else (headers, the second
// encoding word, labels).
bool parse_sass_line(const std::string &line, SassLine *out);

// Parses a guard token ("@P0", "@!UP2", "@PT"); false when malformed.
bool parse_guard(const std::string &token, Guard *out);

}  // namespace prlx_nvbit
