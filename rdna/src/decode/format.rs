//! LLVM-syntax printing of decoded instructions.
use super::Inst;

pub fn format(inst: &Inst, _pc: u64) -> String {
    inst.name.to_string()
}
