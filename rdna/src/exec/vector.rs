//! vector family.
use super::Handler;

pub static OPS: &[(&str, Handler)] = &[];
use super::{Ctx, Flow};
use crate::decode::Inst;
use crate::fault::ExecError;
pub fn vopd(_c: &mut Ctx<'_>, i: &Inst) -> Result<Flow, ExecError> {
    Err(ExecError::unsupported(i.name))
}
pub fn compare(_c: &mut Ctx<'_>, i: &Inst) -> Result<Flow, ExecError> {
    Err(ExecError::unsupported(i.name))
}
