//! The table-driven harness: a [`Case`] names a kernel, its launch and its
//! arguments; [`run`] compiles and loads it, launches it on fresh devices and
//! checks the outputs against the case's CPU reference.

use prlx_emulator::{Device, DeviceConfig, LaunchConfig, LaunchStats};

use super::toolchain::{Source, ptx_for};

/// One kernel argument, in parameter order.
pub enum Arg {
    /// A device allocation holding these bytes; read back after the launch.
    Buffer(Vec<u8>),
    Scalar(Vec<u8>),
}

/// What a launch left behind, for the reference check.
pub struct Outputs {
    /// The contents of every [`Arg::Buffer`], in argument order.
    pub buffers: Vec<Vec<u8>>,
    /// The contents of the module variables named in [`Case::read_global`].
    pub globals: Vec<Vec<u8>>,
    pub stats: LaunchStats,
}

type Check = Box<dyn Fn(&Outputs) -> Result<(), String>>;

pub struct Case {
    pub source: Source,
    pub kernel: &'static str,
    pub launch: LaunchConfig,
    pub args: Vec<Arg>,
    /// Module variables written (via `get_global`) before the launch.
    pub set_globals: Vec<(&'static str, Vec<u8>)>,
    pub read_globals: Vec<&'static str>,
    pub check: Option<Check>,
}

impl Case {
    fn new(source: Source, kernel: &'static str) -> Case {
        Case {
            source,
            kernel,
            launch: LaunchConfig {
                grid: [1, 1, 1],
                block: [32, 1, 1],
                dynamic_shared_bytes: 0,
            },
            args: Vec::new(),
            set_globals: Vec::new(),
            read_globals: Vec::new(),
            check: None,
        }
    }
    pub fn clang(file: &'static str, kernel: &'static str) -> Case {
        Case::new(Source::Clang(file), kernel)
    }
    pub fn nvcc(file: &'static str, kernel: &'static str) -> Case {
        Case::new(Source::Nvcc(file), kernel)
    }
    pub fn ptx(file: &'static str, kernel: &'static str) -> Case {
        Case::new(Source::Ptx(file), kernel)
    }

    pub fn grid(mut self, g: [u32; 3]) -> Case {
        self.launch.grid = g;
        self
    }
    pub fn block(mut self, b: [u32; 3]) -> Case {
        self.launch.block = b;
        self
    }
    pub fn dynamic_shared(mut self, bytes: u32) -> Case {
        self.launch.dynamic_shared_bytes = bytes;
        self
    }
    /// A buffer argument initialised with `data` (any plain numeric slice).
    pub fn buf<T: Pod>(mut self, data: &[T]) -> Case {
        self.args.push(Arg::Buffer(to_bytes(data)));
        self
    }
    /// A zero-filled buffer of `n` elements of `T`.
    pub fn zeros<T: Pod>(mut self, n: usize) -> Case {
        self.args.push(Arg::Buffer(vec![0; n * T::SIZE]));
        self
    }
    pub fn scalar<T: Pod>(mut self, v: T) -> Case {
        self.args.push(Arg::Scalar(to_bytes(&[v])));
        self
    }
    /// A by-value parameter given as raw bytes (a struct passed by value).
    pub fn raw_param(mut self, bytes: Vec<u8>) -> Case {
        self.args.push(Arg::Scalar(bytes));
        self
    }
    pub fn set_global<T: Pod>(mut self, name: &'static str, data: &[T]) -> Case {
        self.set_globals.push((name, to_bytes(data)));
        self
    }
    pub fn read_global(mut self, name: &'static str) -> Case {
        self.read_globals.push(name);
        self
    }
    pub fn check(mut self, f: impl Fn(&Outputs) -> Result<(), String> + 'static) -> Case {
        self.check = Some(Box::new(f));
        self
    }
}

/// Compiles, loads and runs `case` three times: twice with the default
/// schedule (outputs must be bit-identical: determinism) and once under a
/// perturbed schedule; every run must match the CPU reference (all corpus
/// kernels are race-free, so the schedule must not change their results).
pub fn run(case: Case) {
    let ptx = match ptx_for(case.source) {
        Ok(Some(p)) => p,
        Ok(None) => return,
        Err(e) => panic!("{e}"),
    };
    let check = case.check.as_ref().expect("case has no reference check");
    let first = launch_once(&case, &ptx, None).unwrap_or_else(|e| panic!("{e}"));
    if let Err(e) = check(&first) {
        panic!(
            "{}: output differs from the CPU reference: {e}",
            case.kernel
        );
    }
    let second = launch_once(&case, &ptx, None).unwrap_or_else(|e| panic!("{e}"));
    for (i, (a, b)) in first.buffers.iter().zip(&second.buffers).enumerate() {
        if a != b {
            let at = a.iter().zip(b).position(|(x, y)| x != y).unwrap_or(0);
            panic!(
                "{}: nondeterministic: buffer {i} differs between two identical launches at byte {at}",
                case.kernel
            );
        }
    }
    assert_eq!(
        first.globals, second.globals,
        "{}: nondeterministic globals",
        case.kernel
    );
    assert_eq!(
        first.stats, second.stats,
        "{}: nondeterministic launch stats",
        case.kernel
    );
    let perturbed = launch_once(&case, &ptx, Some(0x5eed_1234)).unwrap_or_else(|e| panic!("{e}"));
    if let Err(e) = check(&perturbed) {
        panic!(
            "{}: output under schedule seed 0x5eed1234 differs from the CPU reference: {e}",
            case.kernel
        );
    }
}

/// The outputs of one launch of `case` under `schedule_seed`, or `None` when
/// its compiler is missing (and the toolchain is optional).
pub fn run_with_seed(case: &Case, schedule_seed: Option<u64>) -> Option<Outputs> {
    let ptx = match ptx_for(case.source) {
        Ok(Some(p)) => p,
        Ok(None) => return None,
        Err(e) => panic!("{e}"),
    };
    Some(launch_once(case, &ptx, schedule_seed).unwrap_or_else(|e| panic!("{e}")))
}

fn launch_once(case: &Case, ptx: &str, schedule_seed: Option<u64>) -> Result<Outputs, String> {
    let name = case.kernel;
    let mut device = Device::new(DeviceConfig {
        schedule_seed,
        ..DeviceConfig::default()
    });
    let source_name = case.source.ptx_name();
    let module = device
        .load_module(ptx, &source_name)
        .map_err(|e| format!("{name}: loading {source_name} failed:\n{e}"))?;
    let function = device
        .get_function(module, name)
        .map_err(|e| format!("{name}: {e}"))?;
    let info = device
        .kernel_info(function)
        .ok_or_else(|| format!("{name}: no kernel info"))?
        .clone();
    if info.params.len() != case.args.len() {
        return Err(format!(
            "{name}: kernel has {} parameters, the case passes {}",
            info.params.len(),
            case.args.len()
        ));
    }
    for (var, data) in &case.set_globals {
        let (ptr, size) = device
            .get_global(module, var)
            .map_err(|e| format!("{name}: get_global({var}): {e}"))?;
        if size != data.len() as u64 {
            return Err(format!(
                "{name}: global {var} has {size} bytes, the case writes {}",
                data.len()
            ));
        }
        device
            .mem_write(ptr, data)
            .map_err(|e| format!("{name}: {e}"))?;
    }
    let mut params = vec![0u8; info.param_bytes as usize];
    let mut buffers = Vec::new();
    for (arg, p) in case.args.iter().zip(&info.params) {
        let bytes = match arg {
            Arg::Buffer(data) => {
                let ptr = device
                    .mem_alloc(data.len().max(1) as u64)
                    .map_err(|e| format!("{name}: {e}"))?;
                device
                    .mem_write(ptr, data)
                    .map_err(|e| format!("{name}: {e}"))?;
                buffers.push((ptr, data.len()));
                ptr.to_le_bytes().to_vec()
            }
            Arg::Scalar(bytes) => bytes.clone(),
        };
        if bytes.len() != p.size as usize {
            return Err(format!(
                "{name}: parameter {} is {} bytes, the case passes {}",
                p.name,
                p.size,
                bytes.len()
            ));
        }
        params[p.offset as usize..p.offset as usize + bytes.len()].copy_from_slice(&bytes);
    }
    let stats = device
        .launch(function, &case.launch, &params)
        .map_err(|e| format!("{name}: launch failed: {e}"))?;
    let mut outputs = Outputs {
        buffers: Vec::new(),
        globals: Vec::new(),
        stats,
    };
    for (ptr, len) in buffers {
        let mut data = vec![0u8; len];
        device
            .mem_read(ptr, &mut data)
            .map_err(|e| format!("{name}: {e}"))?;
        outputs.buffers.push(data);
    }
    for var in &case.read_globals {
        let (ptr, size) = device
            .get_global(module, var)
            .map_err(|e| format!("{name}: get_global({var}): {e}"))?;
        let mut data = vec![0u8; size as usize];
        device
            .mem_read(ptr, &mut data)
            .map_err(|e| format!("{name}: {e}"))?;
        outputs.globals.push(data);
    }
    Ok(outputs)
}

/// Plain numeric types that cross to the device as little-endian bytes.
pub trait Pod: Copy + PartialEq + std::fmt::Debug {
    const SIZE: usize;
    fn write(self, out: &mut Vec<u8>);
    fn read(bytes: &[u8]) -> Self;
}

macro_rules! pod {
    ($($t:ty),*) => {$(
        impl Pod for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            fn write(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
            fn read(bytes: &[u8]) -> Self {
                <$t>::from_le_bytes(bytes.try_into().expect("element size"))
            }
        }
    )*};
}
pod!(u8, u16, u32, u64, i8, i16, i32, i64, f32, f64);

pub fn to_bytes<T: Pod>(data: &[T]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len() * T::SIZE);
    for &v in data {
        v.write(&mut out);
    }
    out
}

pub fn from_bytes<T: Pod>(bytes: &[u8]) -> Vec<T> {
    bytes.chunks_exact(T::SIZE).map(T::read).collect()
}

impl Outputs {
    /// Buffer argument number `index` (counting buffers only) as `T`s.
    pub fn get<T: Pod>(&self, index: usize) -> Vec<T> {
        from_bytes(&self.buffers[index])
    }
    pub fn global<T: Pod>(&self, index: usize) -> Vec<T> {
        from_bytes(&self.globals[index])
    }
}

/// Exact comparison; the error names the first mismatches.
pub fn expect_eq<T: Pod>(what: &str, got: &[T], want: &[T]) -> Result<(), String> {
    expect_by(what, got, want, |g, w| g == w)
}

/// Bit-exact float comparison, except that any NaN matches any NaN (the GPU
/// returns a canonical NaN where the host may propagate a payload).
pub fn expect_f32_bits(what: &str, got: &[f32], want: &[f32]) -> Result<(), String> {
    expect_by(what, got, want, |g, w| {
        (g.is_nan() && w.is_nan()) || g.to_bits() == w.to_bits()
    })
}

pub fn expect_f64_bits(what: &str, got: &[f64], want: &[f64]) -> Result<(), String> {
    expect_by(what, got, want, |g, w| {
        (g.is_nan() && w.is_nan()) || g.to_bits() == w.to_bits()
    })
}

/// Within `ulps` units in the last place (NaN matches NaN, infinities exactly).
pub fn expect_f32_ulps(what: &str, got: &[f32], want: &[f32], ulps: u32) -> Result<(), String> {
    expect_by(what, got, want, |g, w| {
        if g.is_nan() || w.is_nan() {
            return g.is_nan() && w.is_nan();
        }
        if g.is_infinite() || w.is_infinite() {
            return g == w;
        }
        ordered(g).abs_diff(ordered(w)) <= ulps as u64
    })
}

/// Within `ulps` units in the last place, for f64.
pub fn expect_f64_ulps(what: &str, got: &[f64], want: &[f64], ulps: u64) -> Result<(), String> {
    expect_by(what, got, want, |g, w| {
        if g.is_nan() || w.is_nan() {
            return g.is_nan() && w.is_nan();
        }
        if g.is_infinite() || w.is_infinite() {
            return g == w;
        }
        let ordered = |x: f64| {
            let b = x.to_bits() as i64 as i128;
            if b < 0 { i64::MIN as i128 - b } else { b }
        };
        ordered(g).abs_diff(ordered(w)) <= ulps as u128
    })
}

/// Maps a float's bits onto a line where adjacent floats are adjacent integers.
fn ordered(x: f32) -> i64 {
    let b = x.to_bits() as i32 as i64;
    if b < 0 { (i32::MIN as i64) - b } else { b }
}

fn expect_by<T: Pod>(
    what: &str,
    got: &[T],
    want: &[T],
    same: impl Fn(T, T) -> bool,
) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!(
            "{what}: {} elements, expected {}",
            got.len(),
            want.len()
        ));
    }
    let bad: Vec<usize> = (0..got.len()).filter(|&i| !same(got[i], want[i])).collect();
    if bad.is_empty() {
        return Ok(());
    }
    let shown: Vec<String> = bad
        .iter()
        .take(6)
        .map(|&i| format!("[{i}] got {:?}, expected {:?}", got[i], want[i]))
        .collect();
    Err(format!(
        "{what}: {} of {} elements differ; {}",
        bad.len(),
        got.len(),
        shown.join("; ")
    ))
}

/// A small deterministic generator (splitmix64) for case inputs.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    pub fn u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }
    /// Uniform in `lo..=hi`.
    pub fn range_i32(&mut self, lo: i32, hi: i32) -> i32 {
        let span = (hi as i64 - lo as i64 + 1) as u64;
        (lo as i64 + (self.next_u64() % span) as i64) as i32
    }
    /// Uniform in `[lo, hi)`.
    pub fn f32(&mut self, lo: f32, hi: f32) -> f32 {
        let unit = (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32;
        lo + (hi - lo) * unit
    }
    pub fn vec_i32(&mut self, n: usize, lo: i32, hi: i32) -> Vec<i32> {
        (0..n).map(|_| self.range_i32(lo, hi)).collect()
    }
    pub fn vec_u32(&mut self, n: usize) -> Vec<u32> {
        (0..n).map(|_| self.u32()).collect()
    }
    pub fn vec_f32(&mut self, n: usize, lo: f32, hi: f32) -> Vec<f32> {
        (0..n).map(|_| self.f32(lo, hi)).collect()
    }
    /// Floats spread over many binades, both signs: `m * 2^e`.
    pub fn wide_f32(&mut self, min_exp: i32, max_exp: i32) -> f32 {
        let m = 1.0 + (self.u32() >> 9) as f32 / (1u32 << 23) as f32;
        let e = self.range_i32(min_exp, max_exp);
        let s = if self.u32() & 1 == 0 { 1.0 } else { -1.0 };
        s * m * 2f32.powi(e)
    }
}
