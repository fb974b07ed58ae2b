#include "select.h"

#include <cctype>
#include <cstdio>

namespace prlx_nvbit {

bool guard_always_true(const Guard &g) {
  return !g.present || (g.num == 7 && !g.negated);
}

bool guard_never_true(const Guard &g) { return g.present && g.num == 7 && g.negated; }

std::string opcode_base(const std::string &opcode) {
  size_t dot = opcode.find('.');
  return dot == std::string::npos ? opcode : opcode.substr(0, dot);
}

EventKind select_event(const std::string &opcode, const Guard &guard) {
  // `@!PT` never executes: ptxas emits it as padding/placeholder.
  if (guard_never_true(guard)) return EventKind::None;
  const std::string base = opcode_base(opcode);
  if (base == "BRA" || base == "BRX" || base == "JMP" || base == "JMX") {
    // Only a guard makes a branch conditional per lane. Unguarded forms
    // (plain BRA, BRA.CONV on a uniform register, BRA.DIV) are either
    // unconditional or warp-uniform and say nothing about lane divergence.
    return guard_always_true(guard) ? EventKind::None : EventKind::Branch;
  }
  if (base == "STS") return EventKind::SharedStore;
  // REDUX is a warp reduction into a register, not a memory reduction:
  // matching on the base keeps it out.
  if (base == "ATOM" || base == "ATOMG" || base == "ATOMS" || base == "RED")
    return EventKind::Atomic;
  if (base == "EXIT" || base == "RET") return EventKind::Exit;
  return EventKind::None;
}

uint8_t trace_event_type(EventKind kind) {
  switch (kind) {
    case EventKind::Branch: return 0;       // Branch
    case EventKind::SharedStore: return 1;  // SharedMemStore
    case EventKind::Atomic: return 2;       // Atomic
    case EventKind::Exit: return 4;         // FuncExit
    case EventKind::None: break;
  }
  return 0xff;
}

const char *kind_name(EventKind kind) {
  switch (kind) {
    case EventKind::Branch: return "Branch";
    case EventKind::SharedStore: return "SharedMemStore";
    case EventKind::Atomic: return "Atomic";
    case EventKind::Exit: return "FuncExit";
    case EventKind::None: break;
  }
  return "None";
}

uint32_t fnv1a32(const std::string &bytes, uint32_t hash) {
  for (unsigned char c : bytes) {
    hash ^= c;
    hash *= 16777619u;
  }
  return hash;
}

uint32_t site_id(const std::string &function, uint32_t offset) {
  char suffix[24];
  std::snprintf(suffix, sizeof suffix, "+0x%x", offset);
  return fnv1a32(function + suffix);
}

bool parse_guard(const std::string &token, Guard *out) {
  Guard g;
  size_t i = 0;
  if (i >= token.size() || token[i] != '@') return false;
  ++i;
  g.present = true;
  if (i < token.size() && token[i] == '!') {
    g.negated = true;
    ++i;
  }
  if (i < token.size() && token[i] == 'U') {
    g.uniform = true;
    ++i;
  }
  if (i >= token.size() || token[i] != 'P') return false;
  ++i;
  std::string rest = token.substr(i);
  if (rest == "T") {
    g.num = 7;
  } else {
    if (rest.empty() || rest.size() > 1 || !std::isdigit(static_cast<unsigned char>(rest[0])))
      return false;
    g.num = rest[0] - '0';
    if (g.num > 6) return false;
  }
  *out = g;
  return true;
}

static void skip_spaces(const std::string &s, size_t *i) {
  while (*i < s.size() && std::isspace(static_cast<unsigned char>(s[*i]))) ++*i;
}

bool parse_sass_line(const std::string &line, SassLine *out) {
  size_t i = 0;
  skip_spaces(line, &i);
  // "/*02a0*/": the offset comment that starts every instruction line.
  if (line.compare(i, 2, "/*") != 0) return false;
  i += 2;
  size_t close = line.find("*/", i);
  if (close == std::string::npos || close == i) return false;
  uint32_t offset = 0;
  for (size_t k = i; k < close; ++k) {
    char c = line[k];
    int digit;
    if (c >= '0' && c <= '9') digit = c - '0';
    else if (c >= 'a' && c <= 'f') digit = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F') digit = c - 'A' + 10;
    else return false;  // "/* 0x000fe4... */": an encoding word, not an instruction
    if (offset > 0x0fffffffu) return false;
    offset = offset * 16 + static_cast<uint32_t>(digit);
  }
  i = close + 2;
  skip_spaces(line, &i);
  SassLine parsed;
  parsed.offset = offset;
  if (i < line.size() && line[i] == '@') {
    size_t end = i;
    while (end < line.size() && !std::isspace(static_cast<unsigned char>(line[end]))) ++end;
    if (!parse_guard(line.substr(i, end - i), &parsed.guard)) return false;
    i = end;
    skip_spaces(line, &i);
  }
  size_t end = i;
  while (end < line.size() && !std::isspace(static_cast<unsigned char>(line[end])) &&
         line[end] != ';')
    ++end;
  if (end == i || !std::isupper(static_cast<unsigned char>(line[i]))) return false;
  parsed.opcode = line.substr(i, end - i);
  size_t semi = line.find(';', end);
  std::string operands = line.substr(end, semi == std::string::npos ? std::string::npos : semi - end);
  size_t a = operands.find_first_not_of(" \t");
  size_t b = operands.find_last_not_of(" \t");
  parsed.operands = a == std::string::npos ? std::string() : operands.substr(a, b - a + 1);
  *out = parsed;
  return true;
}

}  // namespace prlx_nvbit
