// Runs the NVBit tool's instruction-selection rules (src/select.cpp) over
// `cuobjdump -sass` text on stdin. One line per instruction:
//   function <TAB> offset(hex) <TAB> guard|- <TAB> opcode <TAB> kind <TAB> site_id
// so a test can check every decision against the SASS it came from.
#include <iostream>
#include <string>

#include "../src/select.h"

int main() {
  using namespace prlx_nvbit;
  std::string line, function;
  unsigned long instructions = 0;
  while (std::getline(std::cin, line)) {
    size_t f = line.find("Function : ");
    if (f != std::string::npos) {
      function = line.substr(f + 11);
      while (!function.empty() && (function.back() == ' ' || function.back() == '\r'))
        function.pop_back();
      continue;
    }
    SassLine sass;
    if (!parse_sass_line(line, &sass)) continue;
    if (function.empty()) {
      std::cerr << "select_driver: instruction before any 'Function :' line: " << line << "\n";
      return 2;
    }
    ++instructions;
    std::string guard = "-";
    if (sass.guard.present) {
      guard = std::string("@") + (sass.guard.negated ? "!" : "") + (sass.guard.uniform ? "U" : "") +
              "P" + (sass.guard.num == 7 ? std::string("T") : std::to_string(sass.guard.num));
    }
    EventKind kind = select_event(sass.opcode, sass.guard);
    std::cout << function << '\t' << std::hex << sass.offset << std::dec << '\t' << guard << '\t'
              << sass.opcode << '\t' << kind_name(kind) << '\t' << site_id(function, sass.offset)
              << '\n';
  }
  if (instructions == 0) {
    std::cerr << "select_driver: no SASS instructions on stdin\n";
    return 1;
  }
  return 0;
}
