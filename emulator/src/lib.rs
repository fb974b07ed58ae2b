//! prlx-emulator: a SIMT interpreter for NVIDIA PTX.
//!
//! # Where to start
//!
//! [`Device`] is the API (the `libcuda` shim and `prlxctl emu` build on it):
//! it owns global memory and loaded modules and runs launches. Inside:
//!
//! - `program` + `decode`: a module is parsed by `prlx-ptx` and decoded
//!   **once** into `instr::Inst`s: operands resolved to rows of the warp's
//!   register file (immediates and special registers are pre-filled rows),
//!   predicates to bit-per-lane indices, labels to PCs, types and modifiers to
//!   enums and function pointers. Anything the machine cannot execute
//!   faithfully is rejected here (`file.ptx:LINE:COL: unsupported instruction
//!   `mul24.lo.u32``), never executed wrongly.
//! - `launch`: launch validation (as a driver does) and the scheduler: CTAs
//!   on several host threads, or in order, or all resident (cooperative).
//! - `machine`: one warp-instruction at a time: `execute` dispatches each
//!   warp-instruction to its family in `machine/` (`arith`, `int`,
//!   `memory_ops`, `control`, `sync`, `warp`, `tensor`, `texture`), which loops over the
//!   active lanes; registers are laid out `values[row * 32 + lane]`. The
//!   hottest operations (`add/mul/mad/fma/setp/ld/st` on 32/64-bit integers
//!   and `f32`) are inlined whole-warp loops.
//! - `memory`: device allocations and the generic-address windows.
//! - `semantics`: pure scalar instruction semantics (rounding modes, `.ftz`,
//!   half types, FP8, conversions, atomics' read-modify-write), used for the
//!   long tail of instructions.
//! - `decode/*.rs`: one decoder per instruction family (`int`, `arith`,
//!   `float`, `compare`, `convert`, `bitfield`, `memory`, `control`, `warp`,
//!   `tensor`, `texture`); `decode_op` is only the opcode → family table. A
//!   new instruction touches one family's decoder and, if it needs more than
//!   a decoded function pointer (`Op::Alu*`, `Op::Family`), its `machine/` module.
//! - `observer`: [`Observer`] sees every warp-instruction before it runs
//!   (`--trace`/`--step`); without one the hook compiles away.
//!
//! **Layering (an invariant):** the top-level modules depend on each other
//! one way only. From the bottom, each uses only modules listed before it:
//! `texture` (object descriptors, the object table, sampling arithmetic),
//! `instr` (the decoded IR), `memory`, `reconverge` (an analysis of decoded
//! code), `program` (a decoded module), `decode` (PTX → `program`),
//! `machine` (executes one warp-instruction), `launch` (validation and the
//! scheduler, given what it needs from the device as a `launch::Target`),
//! `device` (the API); `semantics`, `alu`, `config`, `error`, `observer`,
//! `text`, `printf` and `heap` (the device heap of `malloc`/`free`) sit
//! below whatever uses them. So the decoder never
//! runs code, the machine never decodes, and nothing below `device` names
//! [`Device`]. `cargo run -p prlx-structure-check -- emulator --acyclic
//! emulator` checks it.
//!
//! # Execution model
//!
//! - **Reconvergence** (`docs/reconvergence.md`): a divergent branch opens a
//!   convergence barrier at its immediate post-dominator (where ptxas places
//!   `BSYNC`; computed per function by `reconverge.rs`), and lanes that
//!   reach it wait for the rest of the group that diverged; a loop's exits
//!   share one barrier at the loop exit. Among the lanes that can run, the
//!   warp executes the lowest PC; the lanes at that PC form the active mask.
//!   So `activemask`, `vote`, `shfl`, `match` and `redux` see the lanes they
//!   would on a GPU (the H200's traces are matched event for event by
//!   `tests/e2e/hardware_traces.rs`). Warp-level instructions combine the
//!   executing lanes intersected with `membermask`.
//! - **Independent thread scheduling** (Volta and later): when a runnable
//!   lane of a diverged warp has not executed during a window of 4096 of
//!   its warp's instructions (it holds a lock the other lanes spin on, or
//!   waits while a long divergent loop runs elsewhere), the lanes that did
//!   run are set aside and the starved lanes run. Every lane makes progress,
//!   so the per-thread `while (atomicCAS(&lock, 0, 1) != 0);` critical
//!   section terminates whatever shape the spinning code has.
//!   Warp-synchronous instructions (`*.sync`, `bar.warp.sync`) then wait for
//!   the set-aside lanes of their member mask. Lanes kept at a convergence
//!   barrier for 4 such windows are let go, and so are lanes waiting there
//!   when their CTA can make no other progress (early returns before a
//!   `bar.sync`). Converged code, and divergent code in which every lane
//!   runs within the window, run exactly as the barriers say.
//! - **Barriers**: `bar.sync`/`barrier.sync`/`bar.red` block the arriving
//!   threads until the expected count arrives (the operand, or every
//!   non-exited thread of the CTA); `bar.arrive` counts without blocking.
//!   Exited threads never hold a barrier. When every remaining warp waits
//!   forever the launch fails with [`LaunchError::Deadlock`].
//! - **Memory**: global allocations are bounds-checked (out of range or
//!   freed → [`LaunchError::IllegalAddress`]; unaligned →
//!   [`LaunchError::MisalignedAddress`]; both name kernel, block, thread, PTX
//!   line and address). Shared memory is per CTA (static, then dynamic
//!   `.extern .shared` at the end), zeroed at CTA start. Local memory is per
//!   thread, with a frame per call. `.const`/`.global` variables live in
//!   device memory ([`Device::get_global`]). Generic addresses of shared,
//!   local and kernel-param memory lie in the windows of [`memory`]; `cvta`
//!   and `isspacep` convert and classify them.
//! - **Calls**: `call` to `.func`s (direct or through a function pointer)
//!   with `.param` arguments and returns, recursion included: each thread
//!   has its own call stack; each function has its own register window
//!   (after its callers'), and a call saves only the caller's registers the
//!   callee can reach: those of a recursion or a call through a pointer
//!   (`decode/call_windows.rs`). The external `vprintf` (device `printf`),
//!   `malloc`/`free` (and so `new`/`delete`; the device heap of [`heap`],
//!   `cudaLimitMallocHeapSize`) and `__assertfail` (`assert`) are built in:
//!   output goes to stdout when the launch ends, or to
//!   [`Device::capture_printf`]'s buffer; a failed assertion stops the
//!   launch as a trap.
//! - **Tensor cores**: `ldmatrix` and `mma.sync.m16n8k{8,16}` with
//!   `f16`/`bf16` inputs and `f32` accumulators, fragments laid out as the
//!   PTX ISA specifies (a Triton 3.x matmul runs unchanged); products are
//!   accumulated in `k` order in `f32`, which may differ from the hardware in
//!   the last bit. `cp.async` copies immediately.
//! - **Watchdogs**: a launch that stops making progress — a CTA executes
//!   [`DEFAULT_STALL_WATCHDOG`] (2^26) warp-instructions in which no thread
//!   writes global or shared memory (atomics count when they change it),
//!   exits or passes a barrier — fails with [`LaunchError::Timeout`] naming
//!   the kernel, the block, and every unfinished warp's lanes, PCs and PTX
//!   lines; never a silent hang ([`Device::set_stall_watchdog`],
//!   `PRLX_EMU_STALL_WATCHDOG=<n>|off`). Separately, [`Device::set_watchdog`]
//!   (or `PRLX_EMU_WATCHDOG=<n>`) bounds all warp-instructions of a launch.
//! - **Cooperative launches** ([`Device::launch_cooperative`]): every CTA of
//!   the grid is resident at once, interleaved on one thread (each CTA in
//!   turn runs a warp for 1 000 instructions), so a CTA spinning on a
//!   grid-wide barrier lets the others arrive. `%envreg1:%envreg2` hold the
//!   address of a zeroed grid workspace allocated for the launch, which is
//!   what `cooperative_groups::this_grid().sync()` uses (an atomic counter
//!   and a spin on it, between two `bar.sync`); outside cooperative launches
//!   they are 0, and `sync()` traps as on hardware. The driver's limit on
//!   the grid size is the `libcuda` shim's to enforce.
//! - **Thread block clusters** (compute capability 9.0+,
//!   [`Device::launch_clustered`] or a kernel's `.reqnctapercluster`;
//!   `launch/cluster.rs`): the CTAs of a cluster are resident at once,
//!   interleaved on one thread as a cooperative grid's are; clusters run
//!   one after another. `barrier.cluster.arrive/wait` counts every
//!   non-exited thread of the cluster. Distributed shared memory: a
//!   `.shared::cluster` address carries the CTA rank + 1 in bits 24..32 of
//!   its shared-window offset (`memory::CLUSTER_RANK_SHIFT`), which `mapa`
//!   sets and `ld/st/atom/red/mbarrier` follow into the peer's shared
//!   memory. Without clusters every CTA is its own 1x1x1 cluster. A
//!   cooperative launch with clusters is refused
//!   ([`LaunchError::Unsupported`]).
//!
//! PTX accepted beyond what clang and nvcc emit: registers declared without
//! `%`, vector registers (`.reg .v4 .f32 v;`, `v.x`/`v.r`, whole in vector
//! operands), `.reg` function parameters and return values with register
//! or immediate call arguments, `WARP_SZ`, `.global`/`.const` variables
//! inside functions, every `set/setp/selp/slct` form, `cvt` with FP8 pairs,
//! TF32, packed halves and `.pack.sat`, `bmsk`, `szext`, all `prmt` modes, the carry
//! chain (`add.cc/addc/sub.cc/subc/mad.cc/madc`). Results narrower than
//! their destination register are sign- or zero-extended into it.
//!
//! - **Textures and surfaces** (`texture/`, decoded by `decode/texture.rs`,
//!   executed by `machine/texture.rs`):
//!   `tex`/`tld4`/`txq` and `suld.b`/`sust.b`/`suq` on 64-bit texture and
//!   surface object handles (unified mode) or module `.texref`/`.surfref`
//!   variables, looked up per lane in the device's object table
//!   ([`Device::texture_object_create`], [`Device::bind_reference`]); sampling
//!   rules (address modes, formats, 8-bit linear-filter weights, cubemaps,
//!   mip levels) are documented in `texture/sample.rs`.
//!
//! Not emulated (rejected at load): independent texture mode (`.samplerref`
//! operands), `sust.p`, `mma` forms
//! other than the above (`wgmma`, `f16` accumulators, integer/`tf32` MMA),
//! the asynchronous cluster transfers (`st.async`,
//! `cp.async.bulk*`), `.address_size 32`, calls to
//! external functions other than `vprintf`/`malloc`/`free`/`__assertfail`, stochastic
//! rounding and FP4/FP6 conversions.
//!
//! # Multi-core execution and determinism
//!
//! A launch runs its CTAs on [`Device::threads`] host threads
//! (`PRLX_EMU_THREADS=<n>`, default: the available cores); each thread
//! takes the next CTA in order when it finishes one, and runs the warps of
//! its CTA one at a time. Several launches (from several host threads) may
//! run at once: [`Device::launch`] takes `&self`. Global memory is shared
//! between them through relaxed atomic loads and stores of the access width
//! (plain moves on x86-64; PTX accesses are naturally aligned), with the
//! same bounds checks and precise faults.
//!
//! **The same launch on the same inputs gives bit-identical memory, the same
//! [`LaunchStats`], the same `printf` output and the same fault every time,
//! on any number of threads**, by this rule: a kernel whose code (or a
//! function it calls) talks to other CTAs through global memory — an atomic
//! on global or generic memory, a reduction there other than an integer
//! `red.add/and/or/xor/min/max`, a `.volatile` or
//! `.relaxed/.acquire/.release` load or store that is not to shared, local or
//! parameter memory, a fence at GPU or system scope — runs its CTAs one after
//! another on one thread, in CTA order, so the order of arrivals is fixed.
//! Integer reductions (histograms, counts: `atomicAdd` whose result is
//! unused) leave the same memory in any order; each is one atomic
//! read-modify-write, so CTAs using them run in parallel. Other kernels' CTAs meet in memory only
//! through plain accesses, whose outcome does not depend on the order unless
//! the kernel has a data race between CTAs (undefined on hardware too; run it
//! with `PRLX_EMU_THREADS=1`, or find it with `PRLX_EMU_SCHEDULE`). Observed
//! launches ([`Device::launch_observed`], traces), launches under the
//! launch-wide watchdog or a schedule seed, cooperative grids and
//! launches with clusters also run on one thread. `printf`
//! output is emitted in CTA order; when CTAs fault, the first faulting CTA
//! in CTA order is reported and output stops after it (no later CTA starts
//! once a fault is known; earlier ones run to their end), as in a serial
//! run. `%clock`, `%clock64` and `%globaltimer` are counters derived from
//! the executed instructions of the warp and its CTA, not host time.
//!
//! - Without a schedule seed, CTAs run in linear order (x fastest) and a warp
//!   runs until it blocks, exits or has executed 100 000 instructions, then
//!   the next runnable warp (round robin) takes over.
//! - With [`DeviceConfig::schedule_seed`] (`PRLX_EMU_SCHEDULE=<seed>`) the CTA
//!   order is a seeded shuffle and each warp runs a seeded 1–32 instructions
//!   before a seeded choice of the next runnable warp (each CTA's choices
//!   come from the seed and the CTA's index, whichever thread runs it). A
//!   racy kernel then gives different results across seeds, and the same
//!   result for the same seed. Race-free kernels give identical results
//!   under every seed.

mod alu;
mod config;
mod decode;
mod device;
mod error;
pub mod heap;
mod instr;
mod launch;
mod machine;
pub mod memory;
mod observer;
mod printf;
mod program;
mod reconverge;
pub mod semantics;
mod text;
pub mod texture;

pub use config::{DeviceAttribute, DeviceConfig};
pub use device::{Device, FunctionId, ModuleId};
pub use error::{EmuError, Fault, LaunchError, LoadDiagnostic, LoadError};
pub use launch::{ClusterLaunch, DEFAULT_STALL_WATCHDOG, LaunchConfig, LaunchStats};
pub use observer::{Control, Observer, RegValue, WarpStep};
pub use program::{KernelInfo, ParamInfo};
