//! The launch path: every launch the shim sees — `cuLaunchKernel` and its
//! kin, HIP's launches, and each kernel node of a CUDA graph launch — is
//! named, recorded and (for a module that records) captured here, around
//! the application's own call, which is made exactly once.
//!
//! A direct launch ([`on_launch`]): the kernel is identified (`state`),
//! filtered (`PRLX_FILTER`), and if its stream is being captured into a
//! graph it is left to the graph's launches; else it gets its session
//! sequence number and launch index, its argument hash, device, context and
//! CPU stack, and — when its module records — a trace (`capture`, or the
//! NVBit tool's), then goes to the session writer (`sink`).
//!
//! A graph launch ([`on_graph_launch`]): every kernel node whose module
//! records (built with the pass, or instrumented at load) gets trace buffers
//! of its own, bound on the launch's stream before the graph runs — to its
//! module's descriptor, or with several nodes of one module to an entry of
//! its launch table ([`trace_plans`]) — and copied back after it; then one
//! record per kernel node, each with its own launch index. Nothing is armed
//! while any stream captures (the calls would be illegal) or when the graph
//! goes into a capture.

use crate::backend::Backend;
use crate::capture::{self, CapturedTrace, Geometry};
use crate::config::{Config, LogLevel};
use crate::driver::{self, Cuda};
use crate::ffi::*;
use crate::graphs::{CUgraphExec, KernelNode};
use crate::guard::forward_once;
use crate::log;
use crate::module_load::notice_metadata;
use crate::process::{active, config};
use crate::registry::{CaptureMode, CodeHandle, Instrumented, Registry};
use crate::sink::{self, Launch, Sink};
use crate::state::{self, registry};
use crate::stream_capture::{any_capture_in_progress, note_captured_launch, stream_is_capturing};
use prlx_session::LaunchRecord;
use std::ffi::c_void;
use std::sync::Arc;

/// The application's arguments to one launch.
pub struct LaunchCall {
    pub function: CUfunction,
    pub geometry: Geometry,
    pub shared_bytes: u32,
    pub stream: CUstream,
    pub params: *mut *mut c_void,
    pub extra: *mut *mut c_void,
    /// The runtime the launch came through.
    pub backend: Backend,
}

/// Records (and, for instrumented modules, captures) one launch around
/// `launch`, which makes the real call. `launch` runs exactly once.
pub fn on_launch(call: LaunchCall, launch: impl FnOnce() -> CUresult) -> CUresult {
    if !active() {
        return launch();
    }
    forward_once("a launch", launch, |run| record_launch(&call, run))
}

/// What a direct launch needs to know of its kernel, read from the
/// registry under one lock.
struct KernelFacts {
    name: String,
    code: Option<CodeHandle>,
    /// How its module's launches are captured (`module_load`).
    capture: CaptureMode,
    /// Its module's recording state, when it records.
    instrumented: Option<Arc<Instrumented>>,
    /// Its module's site table, keyed by the image id (the file the writer
    /// stores it in).
    site_table: Option<(u64, String)>,
    /// The argument hash by the parameter layout already known
    /// (`args::by_known_layout`; CUDA launches only).
    args_by_layout: Option<Option<u64>>,
}

/// The kernel `call` launches and what its launch needs to know of it,
/// unless the filter excludes it. A function the registry knows (whose
/// library does not wait for its descriptor) costs one lock: the filter is
/// consulted on the borrowed name, so a launch it excludes costs one
/// lookup and one match, nothing more.
fn kernel_facts(call: &LaunchCall, config: &Config) -> Option<KernelFacts> {
    {
        let registry = registry();
        if let Some(f) = registry.functions.get(&(call.function as usize)) {
            if !config.wants(&f.name) {
                return None;
            }
            let waits = state::any_pending()
                && registry
                    .code
                    .get(&f.code)
                    .is_some_and(|c| c.pending.is_some());
            if !waits {
                return Some(facts_of(&registry, call, f.name.clone(), Some(f.code)));
            }
        }
    }
    let (name, code) = wanted_kernel(call, config)?;
    Some(facts_of(&registry(), call, name, code))
}

/// [`kernel_facts`] of the kernel `name` in `code`, from the registry.
fn facts_of(
    registry: &Registry,
    call: &LaunchCall,
    name: String,
    code: Option<CodeHandle>,
) -> KernelFacts {
    let info = code.and_then(|c| registry.code.get(&c));
    let instrumented = info.and_then(|i| i.instrumented.clone());
    let site_table = info.and_then(|info| {
        let json = info.instrumented.as_ref()?.site_table.clone()?;
        Some((info.image_id, json))
    });
    let args_by_layout = match call.backend {
        Backend::Cuda => {
            crate::args::by_known_layout(registry, call.function, &name, code, call.params)
        }
        Backend::Hip => None,
    };
    KernelFacts {
        capture: info.map_or(CaptureMode::Metadata, |i| i.capture),
        name,
        code,
        instrumented,
        site_table,
        args_by_layout,
    }
}

/// The kernel `call` launches and its code, unless the filter excludes it
/// (named by the driver when the registry does not know it).
fn wanted_kernel(call: &LaunchCall, config: &Config) -> Option<(String, Option<CodeHandle>)> {
    let known = {
        let registry = registry();
        match registry.functions.get(&(call.function as usize)) {
            Some(f) if !config.wants(&f.name) => return None,
            Some(f) => Some((f.name.clone(), Some(f.code))),
            None => None,
        }
    };
    let (name, code) = known.unwrap_or_else(|| state::identify(call.function, call.backend));
    if let Some(code) = code {
        state::resolve_pending(code);
    }
    config.wants(&name).then_some((name, code))
}

/// Whether the launch goes into a graph being captured instead of running
/// now. HIP streams mean nothing to the CUDA driver: never asked.
fn goes_into_a_graph(call: &LaunchCall) -> bool {
    match call.backend {
        Backend::Cuda => stream_is_capturing(call.stream),
        Backend::Hip => false,
    }
}

/// The launch's session sequence number and its launch index among its
/// kernel's launches, unless `PRLX_MAX_LAUNCHES` launches were recorded
/// already (then it counts as dropped).
fn claim_record(config: &Config, sink: &Sink, kernel: &str) -> Option<(u64, u32)> {
    let mut registry = registry();
    if config
        .max_launches
        .is_some_and(|max| registry.launches_recorded >= max)
    {
        drop(registry);
        sink.count_dropped();
        return None;
    }
    let seq = registry.launches_recorded;
    registry.launches_recorded += 1;
    Some((seq, registry.next_launch_index(kernel)))
}

/// The recording state of `code` and its site table, keyed by the image id
/// (the file the writer stores it in).
fn recording_of(code: Option<CodeHandle>) -> (Option<Arc<Instrumented>>, Option<(u64, String)>) {
    let registry = registry();
    let Some(info) = code.and_then(|c| registry.code.get(&c)) else {
        return (None, None);
    };
    let instrumented = info.instrumented.clone();
    let site_table = instrumented
        .as_ref()
        .and_then(|i| i.site_table.clone())
        .map(|json| (info.image_id, json));
    (instrumented, site_table)
}

fn record_launch(call: &LaunchCall, run: &mut dyn FnMut() -> CUresult) {
    let config = config();
    let Some(facts) = kernel_facts(call, config) else {
        run();
        return;
    };
    if goes_into_a_graph(call) {
        // Not run now: a node of the graph being captured, recorded when
        // that graph is launched. Nothing else may touch the driver here.
        note_captured_launch(&facts.name);
        run();
        return;
    }
    let timestamp_ns = now_ns();
    let Some(sink) = sink::global() else {
        run();
        return;
    };
    let Some((seq, launch_index)) = claim_record(config, sink, &facts.name) else {
        run();
        return;
    };
    let KernelFacts {
        name,
        code,
        capture,
        instrumented,
        mut site_table,
        args_by_layout,
    } = facts;
    let (args_hash, (device, context)) = match call.backend {
        Backend::Cuda => (
            crate::args::finish(args_by_layout, call.function, call.params, call.extra),
            device_and_context(call.stream),
        ),
        // SAFETY: the launch's own argument list.
        Backend::Hip => (unsafe { crate::args::of_extra(call.extra) }, (None, None)),
    };
    let stack = crate::stack::capture_for(launch_index);
    // How this launch is captured (module_load); a kernel without a trace
    // says why, once.
    if instrumented.is_none() && capture != CaptureMode::Nvbit {
        notice_metadata(&name, || state::capture_of(code).1);
    }
    let mut record = LaunchRecord {
        seq,
        kernel: name,
        // Demangled on the writer thread, once per name.
        demangled: None,
        launch_index,
        grid: call.geometry.grid,
        block: call.geometry.block,
        shared_bytes: call.shared_bytes,
        stream: call.stream as u64,
        args_hash,
        timestamp_ns,
        device,
        context,
        capture: Some(capture.as_str().to_owned()),
        ..LaunchRecord::default()
    };
    let trace = match instrumented {
        None if capture == CaptureMode::Nvbit => {
            nvbit_trace(call, &mut record, &mut site_table, run)
        }
        Some(_) if any_capture_in_progress() => {
            // Allocations and copies would be illegal (global capture mode)
            // and could invalidate the application's capture.
            log::once(
                LogLevel::Warn,
                "capture-during-graph-capture",
                "a stream is being captured into a CUDA graph: launches meanwhile are recorded as metadata only",
            );
            record.capture_error =
                Some("not captured: a stream was being captured into a CUDA graph".into());
            record.result = run() as i32;
            None
        }
        Some(inst) => captured_trace(call, &inst, &mut record, run),
        None => {
            record.result = run() as i32;
            None
        }
    };
    // A trace whose warps got fewer slots than configured says so.
    record.truncation = trace.as_ref().and_then(|t| t.truncation.clone());
    sink.submit(Launch {
        record,
        trace: trace.map(Box::new),
        site_table,
        stack,
    });
}

/// Runs the launch of a module the NVBit tool instruments and takes the
/// trace the tool made of it (and the tool's site map, which grows as it
/// instruments: one file per version).
fn nvbit_trace(
    call: &LaunchCall,
    record: &mut LaunchRecord,
    site_table: &mut Option<(u64, String)>,
    run: &mut dyn FnMut() -> CUresult,
) -> Option<CapturedTrace> {
    let launched = run();
    record.result = launched as i32;
    match crate::nvbit::take_trace(call.function as usize).filter(|_| launched == CUDA_SUCCESS) {
        Some(Ok((trace, sites))) => {
            *site_table = Some((prlx_session::fnv1a64(sites.as_bytes()), sites));
            Some(trace)
        }
        Some(Err(e)) => {
            record.capture_error = Some(e);
            None
        }
        None => {
            record.capture_error =
                Some("the NVBit tool handed over no trace for this launch".into());
            None
        }
    }
}

/// Runs the launch of a module that records with trace buffers bound to its
/// descriptor (serialised with the module's other captures) and copies the
/// trace back.
fn captured_trace(
    call: &LaunchCall,
    inst: &Instrumented,
    record: &mut LaunchRecord,
    run: &mut dyn FnMut() -> CUresult,
) -> Option<CapturedTrace> {
    let _serialised = inst.capture_lock.lock().unwrap_or_else(|p| p.into_inner());
    let (launched, captured) = capture::capture(
        call.backend.table(),
        config(),
        inst.descriptor,
        &record.kernel,
        call.geometry,
        call.stream,
        run,
    );
    record.result = launched as i32;
    match captured {
        Ok(trace) => Some(trace),
        Err(e) => {
            log::once(
                LogLevel::Warn,
                "capture",
                &format!("capture of {} failed: {e}", record.kernel),
            );
            record.capture_error = Some(e);
            None
        }
    }
}

fn now_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

/// The device ordinal and context a launch on `stream` runs in: the
/// stream's context, else the current one.
fn device_and_context(stream: CUstream) -> (Option<i32>, Option<u64>) {
    let cuda = driver::cuda();
    let mut context: *mut c_void = std::ptr::null_mut();
    // SAFETY: out-pointers to locals; the application's stream handle.
    let found = unsafe {
        (!stream.is_null()
            && cuda
                .cuStreamGetCtx
                .is_some_and(|f| f(stream, &mut context) == CUDA_SUCCESS))
            || cuda
                .cuCtxGetCurrent
                .is_some_and(|f| f(&mut context) == CUDA_SUCCESS)
    };
    let context = (found && !context.is_null()).then_some(context as u64);
    let mut device = 0;
    // SAFETY: an out-pointer to a local.
    let device = cuda
        .cuCtxGetDevice
        .filter(|_| context.is_some())
        .and_then(|f| (unsafe { f(&mut device) } == CUDA_SUCCESS).then_some(device));
    (device, context)
}

// ---- graph launches -------------------------------------------------------

/// What became of one kernel node's trace in a graph launch.
#[derive(Default)]
struct NodeOutcome {
    trace: Option<CapturedTrace>,
    /// Why the node has no trace although its module records.
    error: Option<String>,
}

/// Records (and traces) one launch of the executable graph `exec` on
/// `stream` around `forward`, the real `cuGraphLaunch`, which runs exactly
/// once.
pub fn on_graph_launch(
    exec: CUgraphExec,
    stream: CUstream,
    forward: impl FnOnce() -> CUresult,
) -> CUresult {
    if !active() {
        return forward();
    }
    forward_once("a CUDA graph launch", forward, |run| {
        record_graph_launch(exec, stream, run)
    })
}

fn record_graph_launch(exec: CUgraphExec, stream: CUstream, run: &mut dyn FnMut() -> CUresult) {
    if stream_is_capturing(stream) {
        // A graph launched into a capture becomes a child graph node: it
        // runs (and is recorded) with the outer graph.
        note_captured_launch("a CUDA graph");
        run();
        return;
    }
    let Some(nodes) = crate::graphs::nodes_of(exec) else {
        log::once(
            LogLevel::Info,
            "graph-unknown",
            "a CUDA graph instantiated before the shim saw it was launched; its kernels are not recorded",
        );
        run();
        return;
    };
    let Some(outcomes) = trace_graph_launch(&nodes, stream, run) else {
        return; // the launch failed: nothing ran, nothing is recorded
    };
    record_graph_nodes(exec as u64, stream, &nodes, outcomes);
}

/// Arms trace buffers for the recording kernel nodes, runs the graph and
/// collects the traces: each node's outcome, or None when the launch failed.
fn trace_graph_launch(
    nodes: &[KernelNode],
    stream: CUstream,
    run: &mut dyn FnMut() -> CUresult,
) -> Option<Vec<NodeOutcome>> {
    let recording: Vec<Option<Arc<Instrumented>>> = nodes
        .iter()
        .map(|n| n.code.and_then(state::instrumented_of))
        .collect();
    let mut outcomes: Vec<NodeOutcome> = nodes.iter().map(|_| NodeOutcome::default()).collect();
    let plans = trace_plans(nodes, &recording, &mut outcomes);
    // Serialised with direct launches of the same modules (in one order).
    let mut locks: Vec<&Arc<Instrumented>> = plans.iter().map(|p| &p.module).collect();
    locks.sort_by_key(|inst| inst.descriptor);
    let _held: Vec<_> = locks
        .iter()
        .map(|inst| inst.capture_lock.lock().unwrap_or_else(|p| p.into_inner()))
        .collect();
    let cuda = driver::cuda();
    let armed = arm_plans(cuda, &plans, nodes, stream, &mut outcomes);
    let launched = run();
    let mut traces = Vec::new();
    if launched == CUDA_SUCCESS {
        traces = armed
            .into_iter()
            .map(|(index, a)| (index, a.collect()))
            .collect();
    } else {
        drop(armed); // the buffers released, the descriptors cleared
    }
    for plan in plans.iter().filter(|p| p.table.is_some()) {
        let count = plan.nodes.len() as u32;
        let table = plan.table.unwrap_or_default();
        if let Err(e) =
            capture::clear_launch_table(cuda, stream, plan.module.descriptor, table, count)
        {
            log::once(
                LogLevel::Warn,
                "launch-table",
                &format!("could not clear a module's launch table after a graph launch: {e}"),
            );
        }
    }
    if launched != CUDA_SUCCESS {
        return None;
    }
    for (index, collected) in traces {
        match collected {
            Ok(trace) => outcomes[index].trace = Some(trace),
            Err(e) => {
                log::once(
                    LogLevel::Warn,
                    "graph-capture",
                    &format!("capture of graph node {} failed: {e}", nodes[index].name),
                );
                outcomes[index].error = Some(e);
            }
        }
    }
    Some(outcomes)
}

/// Binds trace buffers for every planned node on `stream` (a node that
/// cannot be armed records its error) and sets the launch tables' counts.
fn arm_plans<'a>(
    cuda: &'a Cuda,
    plans: &[TracePlan],
    nodes: &[KernelNode],
    stream: CUstream,
    outcomes: &mut [NodeOutcome],
) -> Vec<(usize, capture::Armed<'a>)> {
    let config = config();
    let mut armed = Vec::new();
    for plan in plans {
        for (entry, &index) in plan.nodes.iter().enumerate() {
            let node = &nodes[index];
            let geometry = Geometry {
                grid: node.grid,
                block: node.block,
            };
            let descriptor = plan.module.descriptor;
            let armed_node = match plan.table {
                None => capture::arm(cuda, config, descriptor, &node.name, geometry, stream),
                Some(table) => {
                    let entry = entry as u32;
                    capture::arm_table_entry(
                        cuda, config, table, entry, &node.name, geometry, stream,
                    )
                }
            };
            match armed_node {
                Ok(a) => armed.push((index, a)),
                Err(e) => outcomes[index].error = Some(e),
            }
        }
        if plan.table.is_some() {
            let count = plan.nodes.len() as u32;
            if let Err(e) = capture::set_launch_count(cuda, stream, plan.module.descriptor, count) {
                for &index in &plan.nodes {
                    outcomes[index].error = Some(e.clone());
                }
            }
        }
    }
    armed
}

/// How one module records during a graph launch.
struct TracePlan {
    module: Arc<Instrumented>,
    /// Its launch table, when several of its nodes record at once.
    table: Option<u64>,
    /// The nodes that get traces, in node order (table entry order).
    nodes: Vec<usize>,
}

/// Groups the recording kernel nodes by module: a module with one kernel
/// node in the graph records through its descriptor; several nodes of one
/// module each claim an entry of its launch table (modules instrumented at
/// load have one); a pass-built module has one descriptor only, and its
/// nodes record without a trace, saying why. Nothing is armed while a
/// stream captures.
fn trace_plans(
    nodes: &[KernelNode],
    recording: &[Option<Arc<Instrumented>>],
    outcomes: &mut [NodeOutcome],
) -> Vec<TracePlan> {
    use prlx_ptx_instrument::runtime::LAUNCH_TABLE_ENTRIES;
    let config = config();
    let mut modules: Vec<(Arc<Instrumented>, Vec<usize>)> = Vec::new();
    for (index, inst) in recording.iter().enumerate() {
        let Some(inst) = inst else { continue };
        match modules
            .iter_mut()
            .find(|(m, _)| m.descriptor == inst.descriptor)
        {
            Some((_, members)) => members.push(index),
            None => modules.push((inst.clone(), vec![index])),
        }
    }
    let mut plans = Vec::new();
    for (module, members) in modules {
        let fail = |outcomes: &mut [NodeOutcome], why: String| {
            for &index in &members {
                outcomes[index].error = Some(why.clone());
            }
        };
        if any_capture_in_progress() {
            fail(
                outcomes,
                "not captured: a stream was being captured into a CUDA graph".into(),
            );
            continue;
        }
        let table = if members.len() > 1 {
            match nodes[members[0]].code.and_then(state::launch_table_of) {
                Some(table) => Some(table),
                None => {
                    fail(
                        outcomes,
                        format!(
                            "not traced: {} kernel nodes of this CUDA graph belong to one module built with the pass, which has one trace descriptor",
                            members.len()
                        ),
                    );
                    continue;
                }
            }
        } else {
            None
        };
        // Unwanted nodes get no entry: their grids record nothing. So do
        // nodes past the table's entries (the first ones in node order —
        // for a captured sequence, the order they run in — are traced).
        let mut wanted: Vec<usize> = members
            .iter()
            .copied()
            .filter(|&i| config.wants(&nodes[i].name))
            .collect();
        if table.is_some() && wanted.len() > LAUNCH_TABLE_ENTRIES as usize {
            for &index in &wanted[LAUNCH_TABLE_ENTRIES as usize..] {
                outcomes[index].error = Some(format!(
                    "not traced: only {LAUNCH_TABLE_ENTRIES} kernel nodes of one module are traced per graph launch (its launch table's entries), and this graph has {}",
                    wanted.len()
                ));
            }
            wanted.truncate(LAUNCH_TABLE_ENTRIES as usize);
        }
        if !wanted.is_empty() {
            plans.push(TracePlan {
                module,
                table,
                nodes: wanted,
            });
        }
    }
    plans
}

/// One record per wanted kernel node of a graph launch the driver
/// accepted, with the node's trace when it was captured.
fn record_graph_nodes(
    exec: u64,
    stream: CUstream,
    nodes: &[KernelNode],
    outcomes: Vec<NodeOutcome>,
) {
    let config = config();
    if !nodes.iter().any(|n| config.wants(&n.name)) {
        return;
    }
    let Some(sink) = sink::global() else {
        return;
    };
    let timestamp_ns = now_ns();
    let (device, current_context) = device_and_context(stream);
    let mut stack = None;
    for ((index, node), outcome) in nodes.iter().enumerate().zip(outcomes) {
        if !config.wants(&node.name) {
            continue;
        }
        let Some((seq, launch_index)) = claim_record(config, sink, &node.name) else {
            continue;
        };
        if stack.is_none() {
            stack = Some(crate::stack::capture_for(launch_index));
        }
        let (capture, capture_reason) = state::capture_of(node.code);
        let (_, site_table) = recording_of(node.code);
        if outcome.trace.is_none() && outcome.error.is_none() {
            notice_metadata(&node.name, || capture_reason);
        }
        let record = LaunchRecord {
            seq,
            kernel: node.name.clone(),
            demangled: None,
            launch_index,
            grid: node.grid,
            block: node.block,
            shared_bytes: node.shared_bytes,
            stream: stream as u64,
            args_hash: node.args_hash.clone(),
            timestamp_ns,
            device,
            context: if node.context != 0 {
                Some(node.context)
            } else {
                current_context
            },
            graph_exec: Some(exec),
            graph_node: Some(index as u32),
            capture: Some(capture.as_str().to_owned()),
            capture_error: outcome.error,
            truncation: outcome.trace.as_ref().and_then(|t| t.truncation.clone()),
            ..LaunchRecord::default()
        };
        sink.submit(Launch {
            record,
            trace: outcome.trace.map(Box::new),
            site_table,
            stack: stack.clone().flatten(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::{CodeInfo, FunctionInfo, ParamSlot, PendingDescriptor};

    fn call(function: usize, params: *mut *mut c_void) -> LaunchCall {
        LaunchCall {
            function: function as CUfunction,
            geometry: Geometry {
                grid: [1; 3],
                block: [1; 3],
            },
            shared_bytes: 0,
            stream: std::ptr::null_mut(),
            params,
            extra: std::ptr::null_mut(),
            backend: Backend::Cuda,
        }
    }

    fn register(function: usize, name: &str, code: CodeHandle, info: CodeInfo) {
        state::register_code(code, info);
        let name = name.into();
        registry()
            .functions
            .insert(function, FunctionInfo { name, code });
    }

    #[test]
    fn one_lookup_names_the_kernel_its_capture_and_its_argument_hash() {
        // Handles no other test of this process registers.
        let (function, code) = (0x5eed_1040, CodeHandle::Module(0x5eed_1000));
        let info = CodeInfo {
            ptx_params: [("k".to_string(), vec![ParamSlot { offset: 0, size: 4 }])].into(),
            capture: CaptureMode::Ptx,
            ..CodeInfo::default()
        };
        register(function, "k", code, info);
        let mut n: u32 = 7;
        let mut params = [&mut n as *mut u32 as *mut c_void];
        let everything = Config::from_lookup(|_| None);
        let facts = kernel_facts(&call(function, params.as_mut_ptr()), &everything).unwrap();
        assert_eq!((facts.name.as_str(), facts.code), ("k", Some(code)));
        assert_eq!(facts.capture, CaptureMode::Ptx);
        assert!(facts.instrumented.is_none() && facts.site_table.is_none());
        let hash = prlx_session::fnv1a64(&7u32.to_le_bytes());
        assert_eq!(facts.args_by_layout, Some(Some(hash)));
        let others = Config::from_lookup(|k| (k == "PRLX_FILTER").then(|| "other*".into()));
        assert!(kernel_facts(&call(function, params.as_mut_ptr()), &others).is_none());
        // A function the registry does not know has no layout yet: the
        // driver is asked when the record is made (args::finish).
        let unknown = kernel_facts(&call(0x5eed_10c0, params.as_mut_ptr()), &everything);
        assert_eq!(unknown.map(|f| f.args_by_layout), Some(None));
    }

    #[test]
    fn a_library_waiting_for_its_descriptor_is_looked_up_at_its_launch() {
        let (function, code) = (0x5eed_2040, CodeHandle::Library(0x5eed_2000));
        let info = CodeInfo {
            pending: Some(PendingDescriptor {
                mode: CaptureMode::Ptx,
                site_table: None,
            }),
            ..CodeInfo::default()
        };
        register(function, "waits", code, info);
        state::note_pending();
        let config = Config::from_lookup(|_| None);
        let facts = kernel_facts(&call(function, std::ptr::null_mut()), &config).unwrap();
        // Looked up (here, without a driver that knows the library, in
        // vain): the launch records metadata only and the library no
        // longer waits.
        assert_eq!(facts.capture, CaptureMode::Metadata);
        let registry = registry();
        let info = &registry.code[&code];
        assert!(info.pending.is_none());
        assert!(info.capture_reason.is_some());
    }
}
