//! Launch validation and the CTA/warp scheduler (stub until the machine lands).

use crate::device::{Device, FunctionId, LaunchConfig, LaunchStats};
use crate::error::LaunchError;
use crate::observer::{Control, WarpStep};

/// A statically dispatched observer: `NoObserver` compiles the hook away.
pub(crate) trait StepHook {
    const ENABLED: bool;
    fn before(&mut self, step: &WarpStep<'_>) -> Control;
}

pub(crate) struct NoObserver;

impl StepHook for NoObserver {
    const ENABLED: bool = false;
    fn before(&mut self, _step: &WarpStep<'_>) -> Control {
        Control::Continue
    }
}

pub(crate) fn launch<H: StepHook>(
    _device: &mut Device,
    _f: FunctionId,
    _config: &LaunchConfig,
    _params: &[u8],
    _hook: &mut H,
) -> Result<LaunchStats, LaunchError> {
    Err(LaunchError::InvalidConfig(
        "launch is not implemented yet".into(),
    ))
}
