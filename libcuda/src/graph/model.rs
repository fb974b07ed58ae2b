//! What graphs are made of: nodes and their operations, graphs (nodes plus
//! edges), executable graphs, and the table of all of them.
//!
//! Everything lives in one [`State`] behind its own lock. Lock order: the
//! driver's lock may be held while this one is taken, never the reverse, so
//! code holding the state never calls into the driver.

use super::abi::*;
use crate::cu::*;
use crate::handles::{HandleTable, Kind};
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

/// The unit in which graph memory is backed and reported (32 MiB, as NVIDIA's
/// driver reports it).
pub const GRAPH_MEMORY_GRANULE: u64 = 32 << 20;

/// A kernel launch, its arguments copied when the node was made (as the
/// driver copies `kernelParams`), so the caller's buffers may go away.
#[derive(Debug)]
pub struct KernelOp {
    pub func: usize,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub shared: u32,
    pub cooperative: bool,
    /// Named by a `CUkernel` (`kern` of the v2 parameters, or a library
    /// kernel launched by handle), which is how the parameters read back.
    pub as_kernel: bool,
    /// Launch attributes set on the node (`cuGraphKernelNodeSetAttribute`),
    /// by `CUlaunchAttributeID`: the 64-byte value union as given.
    pub attrs: Vec<(u32, [u8; 64])>,
    /// The packed parameter buffer, laid out as the kernel's `.param` space.
    pub args: Vec<u8>,
    /// Each parameter's offset in `args`.
    pub offsets: Vec<u32>,
    /// The `kernelParams` array `cuGraphKernelNodeGetParams` hands out:
    /// addresses into `args`, rebuilt whenever `args` moves.
    pub arg_ptrs: Vec<usize>,
}

impl KernelOp {
    pub fn new(
        func: usize,
        grid: [u32; 3],
        block: [u32; 3],
        shared: u32,
        cooperative: bool,
        args: Vec<u8>,
        offsets: Vec<u32>,
    ) -> KernelOp {
        let mut op = KernelOp {
            func,
            grid,
            block,
            shared,
            cooperative,
            as_kernel: false,
            attrs: Vec::new(),
            args,
            offsets,
            arg_ptrs: Vec::new(),
        };
        op.arg_ptrs = op.pointers();
        op
    }

    fn pointers(&self) -> Vec<usize> {
        let base = self.args.as_ptr() as usize;
        self.offsets.iter().map(|&o| base + o as usize).collect()
    }
}

impl Clone for KernelOp {
    fn clone(&self) -> KernelOp {
        let mut copy = KernelOp::new(
            self.func,
            self.grid,
            self.block,
            self.shared,
            self.cooperative,
            self.args.clone(),
            self.offsets.clone(),
        );
        copy.as_kernel = self.as_kernel;
        copy.attrs = self.attrs.clone();
        copy
    }
}

/// A copy's `CUDA_MEMCPY3D`, held by value.
pub struct Copy3D(pub CUDA_MEMCPY3D);

// SAFETY: the host pointers inside belong to the application, which may use
// the graph from any thread; they are only dereferenced by the copy itself,
// when the graph runs, as the API documents.
unsafe impl Send for Copy3D {}
// SAFETY: as above; shared copies are only read.
unsafe impl Sync for Copy3D {}

impl Clone for Copy3D {
    fn clone(&self) -> Copy3D {
        // SAFETY: a plain-data C struct; reading it bitwise copies it.
        Copy3D(unsafe { std::ptr::read(&self.0) })
    }
}

impl std::fmt::Debug for Copy3D {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let c = &self.0;
        write!(
            f,
            "Copy3D({}x{}x{} bytes, {} -> {})",
            c.width_in_bytes, c.height, c.depth, c.src_memory_type, c.dst_memory_type
        )
    }
}

impl Copy3D {
    /// A zero-filled description (every field unset).
    pub fn zeroed() -> Copy3D {
        // SAFETY: all-zero is a valid CUDA_MEMCPY3D (NULL pointers, zero sizes).
        Copy3D(unsafe { std::mem::zeroed() })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemsetOp {
    pub dst: u64,
    pub pitch: usize,
    pub value: u32,
    pub element_size: u32,
    pub width: usize,
    pub height: usize,
}

/// What a node does.
#[derive(Debug, Clone)]
pub enum Op {
    Kernel(KernelOp),
    Memcpy(Copy3D),
    Memset(MemsetOp),
    Host {
        f: usize,
        data: usize,
    },
    /// The node's own graph (a clone of the one it was made from).
    Child(usize),
    Empty,
    EventRecord(usize),
    EventWait(usize),
    /// Graph memory (see [`GraphMemory`]) allocated when the node runs.
    MemAlloc {
        dptr: u64,
        bytes: usize,
    },
    MemFree(u64),
}

impl Op {
    /// Its `CUgraphNodeType`.
    pub fn node_type(&self) -> u32 {
        match self {
            Op::Kernel(_) => NODE_KERNEL,
            Op::Memcpy(_) => NODE_MEMCPY,
            Op::Memset(_) => NODE_MEMSET,
            Op::Host { .. } => NODE_HOST,
            Op::Child(_) => NODE_GRAPH,
            Op::Empty => NODE_EMPTY,
            Op::EventWait(_) => NODE_WAIT_EVENT,
            Op::EventRecord(_) => NODE_EVENT_RECORD,
            Op::MemAlloc { .. } => NODE_MEM_ALLOC,
            Op::MemFree(_) => NODE_MEM_FREE,
        }
    }
}

#[derive(Debug)]
pub struct Node {
    pub graph: usize,
    pub op: Op,
    /// `cuGraphNodeGetLocalId`: unique within its graph.
    pub local_id: u32,
}

#[derive(Debug, Default)]
pub struct Graph {
    /// Nodes in creation order (what `cuGraphGetNodes` lists, and how
    /// `cuGraphExecUpdate` pairs nodes).
    pub nodes: Vec<usize>,
    /// Edges (from, to) in the order they were added.
    pub edges: Vec<(usize, usize)>,
    /// The child-graph node this graph belongs to, if any.
    pub owner: Option<usize>,
    /// The capture sequence building this graph, while it runs.
    pub capture: Option<u64>,
    /// `cuGraphGetId`.
    pub id: u32,
    /// The next node's local id.
    pub next_local_id: u32,
    /// For a clone: original node -> its copy (`cuGraphNodeFindInClone`).
    pub clone_of: HashMap<usize, usize>,
    /// User objects this graph holds references to, and how many.
    pub user_refs: BTreeMap<usize, u64>,
}

/// One node of an executable graph: its operation as of instantiation (or
/// the last update), and its dependencies by index.
#[derive(Debug, Clone)]
pub struct ExecNode {
    /// The graph nodes this node stands for: the one instantiated, then the
    /// nodes of graphs it was updated from.
    pub origins: Vec<usize>,
    pub op: ExecOp,
    pub enabled: bool,
    /// Indices, in `ExecGraph::nodes`, of the nodes this one depends on,
    /// in edge order.
    pub deps: Vec<usize>,
}

#[derive(Debug, Clone)]
pub enum ExecOp {
    Kernel(KernelOp),
    Memcpy(Copy3D),
    Memset(MemsetOp),
    Host { f: usize, data: usize },
    Child(ExecGraph),
    Empty,
    EventRecord(usize),
    EventWait(usize),
    MemAlloc { dptr: u64, bytes: usize },
    MemFree(u64),
}

impl ExecOp {
    pub fn node_type(&self) -> u32 {
        match self {
            ExecOp::Kernel(_) => NODE_KERNEL,
            ExecOp::Memcpy(_) => NODE_MEMCPY,
            ExecOp::Memset(_) => NODE_MEMSET,
            ExecOp::Host { .. } => NODE_HOST,
            ExecOp::Child(_) => NODE_GRAPH,
            ExecOp::Empty => NODE_EMPTY,
            ExecOp::EventWait(_) => NODE_WAIT_EVENT,
            ExecOp::EventRecord(_) => NODE_EVENT_RECORD,
            ExecOp::MemAlloc { .. } => NODE_MEM_ALLOC,
            ExecOp::MemFree(_) => NODE_MEM_FREE,
        }
    }
}

/// An instantiated graph: its nodes in the source graph's creation order,
/// and the order they run in.
#[derive(Debug, Clone, Default)]
pub struct ExecGraph {
    pub nodes: Vec<ExecNode>,
    /// A topological order (ties broken by creation order).
    pub order: Vec<usize>,
}

impl ExecGraph {
    /// The graph allocations this executable graph's allocation nodes make
    /// (child graphs included).
    pub fn allocations(&self, out: &mut Vec<u64>) {
        for n in &self.nodes {
            match &n.op {
                ExecOp::MemAlloc { dptr, .. } => out.push(*dptr),
                ExecOp::Child(c) => c.allocations(out),
                _ => {}
            }
        }
    }

    /// The node standing for graph node `origin`, searched through child graphs.
    pub fn find_mut(&mut self, origin: usize) -> Option<&mut ExecNode> {
        for n in &mut self.nodes {
            if n.origins.contains(&origin) {
                return Some(n);
            }
            if let ExecOp::Child(child) = &mut n.op {
                if let Some(found) = child.find_mut(origin) {
                    return Some(found);
                }
            }
        }
        None
    }
}

#[derive(Debug)]
pub struct Exec {
    /// Shared with launches in progress; updates copy on write.
    pub root: Arc<ExecGraph>,
    pub flags: u64,
    pub id: u32,
    /// User-object references held while the executable graph exists
    /// (those of its graph and child graphs when it was instantiated).
    pub user_refs: BTreeMap<usize, u64>,
}

/// A user object (`cuUserObjectCreate`): a destructor called with `ptr`
/// when the last reference goes.
#[derive(Debug)]
pub struct UserObject {
    pub ptr: usize,
    pub destroy: usize,
    pub refs: u64,
}

/// One capture sequence (`cuStreamBeginCapture` .. `cuStreamEndCapture`).
#[derive(Debug)]
pub struct Capture {
    pub origin: usize,
    pub graph: usize,
    pub mode: u32,
    pub thread: std::thread::ThreadId,
    pub ctx: usize,
    pub invalidated: bool,
    /// Streams that joined through an event wait, besides the origin.
    pub joined: Vec<usize>,
    /// Capturing into the caller's graph (`cuStreamBeginCaptureToGraph`):
    /// a failed capture leaves it alone.
    pub user_graph: bool,
}

/// A stream taking part in a capture.
#[derive(Debug)]
pub struct StreamCapture {
    pub capture: u64,
    /// The nodes the next captured node depends on.
    pub deps: Vec<usize>,
    /// The last array `cuStreamGetCaptureInfo` handed out (valid until the
    /// next call on the stream).
    pub deps_out: Vec<usize>,
    pub edges_out: Vec<EdgeData>,
}

/// An event last recorded in a capturing stream: waiting on it joins its
/// capture after these nodes.
#[derive(Debug)]
pub struct CapturedEvent {
    pub capture: u64,
    pub nodes: Vec<usize>,
}

/// One graph allocation: device memory reserved when its allocation node
/// was made, at an address fixed for the graph's life, and "allocated"
/// (`live`) from the moment an allocation node runs until a free node runs
/// or the application frees it (`cuMemFreeAsync`, `cuMemFree`).
#[derive(Debug, Clone, Copy)]
pub struct GraphMemory {
    pub bytes: usize,
    pub live: bool,
    /// The executable graph whose allocation node makes it (one at a time).
    pub exec: Option<usize>,
}

pub struct State {
    /// Graph allocations by address.
    pub graph_memory: HashMap<u64, GraphMemory>,
    /// High-water marks of used and reserved graph memory.
    pub graph_memory_high: (u64, u64),
    pub graphs: HandleTable<Graph>,
    pub user_objects: HandleTable<UserObject>,
    /// Destructors of user objects whose last reference went, to run once
    /// the state's lock is released.
    pending_destructors: Vec<(usize, usize)>,
    pub nodes: HandleTable<Node>,
    pub execs: HandleTable<Exec>,
    pub captures: BTreeMap<u64, Capture>,
    /// Stream key (see `capture::stream_key`) -> its part in a capture.
    pub streams: HashMap<usize, StreamCapture>,
    pub events: HashMap<usize, CapturedEvent>,
    next_id: u32,
    next_capture: u64,
}

static STATE: Mutex<Option<State>> = Mutex::new(None);

/// How many captures run, as of the last change: stream-ordered calls skip
/// the state's lock while it is zero.
static ACTIVE_CAPTURES: AtomicUsize = AtomicUsize::new(0);

/// Whether any capture runs (see [`ACTIVE_CAPTURES`]).
pub fn captures_active() -> bool {
    ACTIVE_CAPTURES.load(Ordering::Acquire) != 0
}

/// Runs `f` on the graph state (never call the driver from inside), then,
/// with the lock released, the destructors of user objects it let go.
pub fn with_state<R>(f: impl FnOnce(&mut State) -> R) -> R {
    let mut guard = STATE.lock().unwrap_or_else(PoisonError::into_inner);
    let state = guard.get_or_insert_with(State::new);
    let r = f(state);
    ACTIVE_CAPTURES.store(state.captures.len(), Ordering::Release);
    let destructors = std::mem::take(&mut state.pending_destructors);
    drop(guard);
    for (destroy, ptr) in destructors {
        // SAFETY: a non-null CUhostFn the application registered with this
        // argument; called once, after its last reference went.
        let destroy: unsafe extern "C" fn(*mut std::ffi::c_void) =
            unsafe { std::mem::transmute(destroy) };
        // SAFETY: `destroy` is the application's CUhostFn for this user object and `ptr` the argument it
        // registered with it; called once, after the last reference went, with no lock held.
        unsafe { destroy(ptr as *mut std::ffi::c_void) };
    }
    r
}

fn h(raw: usize) -> *mut std::ffi::c_void {
    raw as *mut std::ffi::c_void
}

impl State {
    fn new() -> State {
        State {
            graph_memory: HashMap::new(),
            graph_memory_high: (0, 0),
            graphs: HandleTable::new(Kind::Graph),
            user_objects: HandleTable::new(Kind::UserObject),
            pending_destructors: Vec::new(),
            nodes: HandleTable::new(Kind::GraphNode),
            execs: HandleTable::new(Kind::GraphExec),
            captures: BTreeMap::new(),
            streams: HashMap::new(),
            events: HashMap::new(),
            next_id: 1,
            next_capture: 1,
        }
    }

    pub fn next_id(&mut self) -> u32 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// Updates the graph-memory high-water marks.
    pub fn note_graph_memory(&mut self) {
        let (used, reserved) = self.graph_memory_now();
        self.graph_memory_high.0 = self.graph_memory_high.0.max(used);
        self.graph_memory_high.1 = self.graph_memory_high.1.max(reserved);
    }

    /// Graph memory in use and reserved, in whole granules of
    /// [`GRAPH_MEMORY_GRANULE`]: on an H200 (driver 580) one live 2 KiB
    /// allocation node reported 32 MiB used and 32 MiB reserved
    /// (`tests/runtime-api/graph_memory.cu`). Allocations share granules.
    fn graph_memory_now(&self) -> (u64, u64) {
        let used: u64 = self
            .graph_memory
            .values()
            .filter(|m| m.live)
            .map(|m| m.bytes as u64)
            .sum();
        let reserved: u64 = self.graph_memory.values().map(|m| m.bytes as u64).sum();
        let granules = |bytes: u64| bytes.div_ceil(GRAPH_MEMORY_GRANULE) * GRAPH_MEMORY_GRANULE;
        (granules(used), granules(reserved))
    }

    /// `CUgraphMem_attribute`: used current/high, reserved current/high.
    pub fn graph_memory_attribute(&self, attr: u32) -> Result<u64, CUresult> {
        let (used, reserved) = self.graph_memory_now();
        match attr {
            0 => Ok(used),
            1 => Ok(self.graph_memory_high.0),
            2 => Ok(reserved),
            3 => Ok(self.graph_memory_high.1),
            _ => Err(CUDA_ERROR_INVALID_VALUE),
        }
    }

    pub fn reset_graph_memory_high(&mut self, attr: u32) -> Result<(), CUresult> {
        let (used, reserved) = self.graph_memory_now();
        match attr {
            1 => self.graph_memory_high.0 = used,
            3 => self.graph_memory_high.1 = reserved,
            _ => return Err(CUDA_ERROR_INVALID_VALUE),
        }
        Ok(())
    }

    pub fn next_capture_id(&mut self) -> u64 {
        let id = self.next_capture;
        self.next_capture += 1;
        id
    }

    pub fn new_graph(&mut self) -> usize {
        let id = self.next_id();
        self.graphs.insert(Graph {
            id,
            ..Graph::default()
        }) as usize
    }

    pub fn graph(&self, g: usize) -> Result<&Graph, CUresult> {
        self.graphs.get(h(g)).ok_or(CUDA_ERROR_INVALID_HANDLE)
    }

    pub fn graph_mut(&mut self, g: usize) -> Result<&mut Graph, CUresult> {
        self.graphs.get_mut(h(g)).ok_or(CUDA_ERROR_INVALID_HANDLE)
    }

    pub fn node(&self, n: usize) -> Result<&Node, CUresult> {
        self.nodes.get(h(n)).ok_or(CUDA_ERROR_INVALID_HANDLE)
    }

    pub fn node_mut(&mut self, n: usize) -> Result<&mut Node, CUresult> {
        self.nodes.get_mut(h(n)).ok_or(CUDA_ERROR_INVALID_HANDLE)
    }

    /// Adds a node after `deps` (all in `g`, no repeats).
    pub fn add_node(&mut self, g: usize, deps: &[usize], op: Op) -> Result<usize, CUresult> {
        self.graph(g)?;
        for (i, d) in deps.iter().enumerate() {
            if self.node(*d).map(|n| n.graph) != Ok(g) || deps[..i].contains(d) {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
        }
        let child = match &op {
            Op::Child(c) => Some(*c),
            _ => None,
        };
        let local_id = {
            let graph = self.graph_mut(g)?;
            graph.next_local_id += 1;
            graph.next_local_id - 1
        };
        let n = self.nodes.insert(Node {
            graph: g,
            op,
            local_id,
        }) as usize;
        if let Some(c) = child {
            self.graph_mut(c)?.owner = Some(n);
        }
        let graph = self.graph_mut(g)?;
        graph.nodes.push(n);
        graph.edges.extend(deps.iter().map(|d| (*d, n)));
        Ok(n)
    }

    /// The nodes `n` depends on, in edge order.
    pub fn dependencies(&self, n: usize) -> Result<Vec<usize>, CUresult> {
        let g = self.node(n)?.graph;
        Ok(self
            .graph(g)?
            .edges
            .iter()
            .filter(|e| e.1 == n)
            .map(|e| e.0)
            .collect())
    }

    pub fn dependents(&self, n: usize) -> Result<Vec<usize>, CUresult> {
        let g = self.node(n)?.graph;
        Ok(self
            .graph(g)?
            .edges
            .iter()
            .filter(|e| e.0 == n)
            .map(|e| e.1)
            .collect())
    }

    /// Removes a node, its edges, and (for a child-graph node) its graph.
    pub fn destroy_node(&mut self, n: usize) -> Result<(), CUresult> {
        let node = self.nodes.remove(h(n)).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
        if let Ok(graph) = self.graph_mut(node.graph) {
            graph.nodes.retain(|x| *x != n);
            graph.edges.retain(|e| e.0 != n && e.1 != n);
        }
        if let Op::Child(c) = node.op {
            self.destroy_graph(c);
        }
        for s in self.streams.values_mut() {
            s.deps.retain(|x| *x != n);
        }
        Ok(())
    }

    /// A user object; an unknown handle is an invalid value (as
    /// `cuGraphRetainUserObject`/`cuGraphReleaseUserObject` report it).
    fn user_object_mut(&mut self, object: usize) -> Result<&mut UserObject, CUresult> {
        self.user_objects
            .get_mut(h(object))
            .ok_or(CUDA_ERROR_INVALID_VALUE)
    }

    /// Adds `count` references to a user object.
    pub fn retain_object(&mut self, object: usize, count: u64) -> Result<(), CUresult> {
        let o = self.user_object_mut(object)?;
        o.refs += count;
        Ok(())
    }

    /// Drops `count` references; the last one queues the destructor.
    pub fn release_object(&mut self, object: usize, count: u64) -> Result<(), CUresult> {
        let o = self.user_object_mut(object)?;
        if count > o.refs {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        o.refs -= count;
        if o.refs == 0
            && let Some(o) = self.user_objects.remove(h(object))
        {
            self.pending_destructors.push((o.destroy, o.ptr));
        }
        Ok(())
    }

    /// The user-object references of `g` and its child graphs, summed.
    pub fn user_refs(&self, g: usize, out: &mut BTreeMap<usize, u64>) {
        let Ok(graph) = self.graph(g) else { return };
        for (o, n) in &graph.user_refs {
            *out.entry(*o).or_default() += n;
        }
        for n in &graph.nodes {
            if let Ok(Node {
                op: Op::Child(c), ..
            }) = self.node(*n)
            {
                self.user_refs(*c, out);
            }
        }
    }

    /// Releases references held by a graph or an executable graph.
    pub fn release_refs(&mut self, refs: BTreeMap<usize, u64>) {
        for (o, n) in refs {
            let _ = self.release_object(o, n);
        }
    }

    /// Removes a graph and everything in it.
    pub fn destroy_graph(&mut self, g: usize) {
        if let Some(graph) = self.graphs.remove(h(g)) {
            self.release_refs(graph.user_refs);
            for n in graph.nodes {
                if let Some(Node {
                    op: Op::Child(c), ..
                }) = self.nodes.remove(h(n))
                {
                    self.destroy_graph(c);
                }
            }
        }
    }

    /// A deep copy of `g` (child graphs copied too); records which copy
    /// each node got.
    pub fn clone_graph(&mut self, g: usize) -> Result<usize, CUresult> {
        let (nodes, edges) = {
            let graph = self.graph(g)?;
            (graph.nodes.clone(), graph.edges.clone())
        };
        let copy = self.new_graph();
        let mut map = HashMap::new();
        for n in nodes {
            let op = match self.node(n)?.op.clone() {
                Op::Child(c) => Op::Child(self.clone_graph(c)?),
                op => op,
            };
            let new = self.add_node(copy, &[], op)?;
            map.insert(n, new);
        }
        // The clone holds its own references to the original's user objects.
        let refs = self.graph(g)?.user_refs.clone();
        for (o, n) in &refs {
            self.retain_object(*o, *n)?;
        }
        let graph = self.graph_mut(copy)?;
        graph.edges = edges.iter().map(|(a, b)| (map[a], map[b])).collect();
        graph.clone_of = map;
        graph.user_refs = refs;
        Ok(copy)
    }

    /// A topological order of `g`'s nodes (as indices in creation order),
    /// ready nodes taken in creation order; `Err(node)` names a node on a cycle.
    pub fn topological_order(&self, g: usize) -> Result<Result<Vec<usize>, usize>, CUresult> {
        let graph = self.graph(g)?;
        let index: HashMap<usize, usize> = graph
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (*n, i))
            .collect();
        let mut pending = vec![0usize; graph.nodes.len()];
        let mut out_edges = vec![Vec::new(); graph.nodes.len()];
        for (a, b) in &graph.edges {
            let (a, b) = (index[a], index[b]);
            pending[b] += 1;
            out_edges[a].push(b);
        }
        let mut ready: std::collections::BTreeSet<usize> =
            (0..pending.len()).filter(|i| pending[*i] == 0).collect();
        let mut order = Vec::with_capacity(pending.len());
        while let Some(i) = ready.pop_first() {
            order.push(i);
            for &j in &out_edges[i] {
                pending[j] -= 1;
                if pending[j] == 0 {
                    ready.insert(j);
                }
            }
        }
        if order.len() < pending.len() {
            let stuck = (0..pending.len()).find(|i| pending[*i] > 0).unwrap_or(0);
            return Ok(Err(graph.nodes[stuck]));
        }
        Ok(Ok(order))
    }

    /// Instantiates `g`: `Err((code, node))` for a cycle (naming a node on it).
    pub fn instantiate(&self, g: usize) -> Result<ExecGraph, (CUresult, Option<usize>)> {
        let order = match self.topological_order(g).map_err(|e| (e, None))? {
            Ok(order) => order,
            Err(node) => return Err((CUDA_ERROR_INVALID_VALUE, Some(node))),
        };
        let graph = self.graph(g).map_err(|e| (e, None))?;
        let index: HashMap<usize, usize> = graph
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (*n, i))
            .collect();
        let mut nodes = Vec::with_capacity(graph.nodes.len());
        for &n in &graph.nodes {
            let node = self.node(n).map_err(|e| (e, Some(n)))?;
            let op = match &node.op {
                Op::Kernel(k) => ExecOp::Kernel(k.clone()),
                Op::Memcpy(c) => ExecOp::Memcpy(c.clone()),
                Op::Memset(m) => ExecOp::Memset(*m),
                Op::Host { f, data } => ExecOp::Host { f: *f, data: *data },
                Op::Child(c) => ExecOp::Child(self.instantiate(*c)?),
                Op::Empty => ExecOp::Empty,
                Op::EventRecord(e) => ExecOp::EventRecord(*e),
                Op::EventWait(e) => ExecOp::EventWait(*e),
                Op::MemAlloc { dptr, bytes } => ExecOp::MemAlloc {
                    dptr: *dptr,
                    bytes: *bytes,
                },
                Op::MemFree(p) => ExecOp::MemFree(*p),
            };
            let deps = graph
                .edges
                .iter()
                .filter(|e| e.1 == n)
                .map(|e| index[&e.0])
                .collect();
            nodes.push(ExecNode {
                origins: vec![n],
                op,
                enabled: true,
                deps,
            });
        }
        Ok(ExecGraph { nodes, order })
    }

    /// A graph with the nodes and edges of an executable graph (a graph
    /// launched into a capturing stream becomes a child graph node).
    pub fn graph_from_exec(&mut self, exec: &ExecGraph) -> Result<usize, CUresult> {
        let g = self.new_graph();
        let mut made = Vec::with_capacity(exec.nodes.len());
        for n in &exec.nodes {
            let op = match &n.op {
                ExecOp::Kernel(k) => Op::Kernel(k.clone()),
                ExecOp::Memcpy(c) => Op::Memcpy(c.clone()),
                ExecOp::Memset(m) => Op::Memset(*m),
                ExecOp::Host { f, data } => Op::Host { f: *f, data: *data },
                ExecOp::Child(c) => Op::Child(self.graph_from_exec(c)?),
                ExecOp::Empty => Op::Empty,
                ExecOp::EventRecord(e) => Op::EventRecord(*e),
                ExecOp::EventWait(e) => Op::EventWait(*e),
                ExecOp::MemAlloc { dptr, bytes } => Op::MemAlloc {
                    dptr: *dptr,
                    bytes: *bytes,
                },
                ExecOp::MemFree(p) => Op::MemFree(*p),
            };
            let op = if n.enabled { op } else { Op::Empty };
            made.push(self.add_node(g, &[], op)?);
        }
        // Edges after all nodes: a dependency may point at a later node.
        let edges = exec
            .nodes
            .iter()
            .enumerate()
            .flat_map(|(i, n)| n.deps.iter().map(move |d| (*d, i)))
            .map(|(a, b)| (made[a], made[b]))
            .collect();
        self.graph_mut(g)?.edges = edges;
        Ok(g)
    }
}
