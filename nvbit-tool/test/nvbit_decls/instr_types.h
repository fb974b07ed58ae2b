// prlx's declaration of NVBit 1.7's instr_types.h (operand descriptions), as
// far as the tool uses it. See README.md: not NVBit's file.
#pragma once

#include <stdint.h>

namespace InstrType {

constexpr const int RZ = 255;
constexpr const int PT = 7;
constexpr const int MAX_CHARS = 256;

enum class MemorySpace { NONE, LOCAL, GENERIC, GLOBAL, SHARED, CONSTANT, GLOBAL_TO_SHARED, SURFACE, TEXTURE };

enum class OperandType { IMM_UINT64, IMM_DOUBLE, REG, PRED, UREG, UPRED, CBANK, MREF, GENERIC, MEM_DESC };

enum class RegModifierType { NO_MOD = 0, X1, X4, X8, X16, U32, U64 };

typedef struct {
  OperandType type;
  char str[MAX_CHARS];
  bool is_neg;
  bool is_not;
  bool is_abs;
  int nbytes;
  union {
    struct {
      uint64_t value;
    } imm_uint64;
    struct {
      double value;
    } imm_double;
    struct {
      int num;
      char prop[MAX_CHARS];
    } reg;
    struct {
      int num;
    } pred;
    struct {
      bool has_ra;
      int ra_num;
      RegModifierType ra_mod;
      bool has_ur;
      int ur_num;
      RegModifierType ur_mod;
      bool has_imm;
      int imm;
    } mref;
  } u;
} operand_t;

}  // namespace InstrType
