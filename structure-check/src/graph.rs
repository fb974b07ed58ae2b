//! The module dependency graph of one target and its cycles.
//!
//! A node is a group of modules ([`Granularity`]); there is an edge A → B
//! when code in A names an item that B defines. Names are resolved through
//! the crate's own `use` imports, re-exports and globs, so `crate::Foo`
//! re-exported by the root from `a` counts as a use of `a`, not of the root.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::modtree::CrateTree;

/// How modules are grouped into graph nodes.
#[derive(Clone, Debug)]
pub struct Granularity {
    /// Module path components kept: 1 groups by top-level module.
    pub depth: usize,
    /// Modules whose children are nodes of their own (e.g. `["api"]`: each
    /// `api::x` is a node), whatever `depth` says.
    pub expand: Vec<Vec<String>>,
}

impl Default for Granularity {
    fn default() -> Self {
        Granularity {
            depth: 1,
            expand: Vec::new(),
        }
    }
}

impl Granularity {
    /// The node a module belongs to.
    pub fn node(&self, path: &[String]) -> Vec<String> {
        let mut keep = self.depth;
        for e in &self.expand {
            if path.starts_with(e) {
                keep = keep.max(e.len() + 1);
            }
        }
        path[..keep.min(path.len())].to_vec()
    }
}

/// The display name of a node: `crate` for the root.
pub fn node_name(path: &[String]) -> String {
    if path.is_empty() {
        "crate".to_string()
    } else {
        path.join("::")
    }
}

/// The references behind one edge.
#[derive(Clone, Debug)]
pub struct EdgeInfo {
    pub count: usize,
    /// One of them: file and line.
    pub example: (PathBuf, usize),
}

#[derive(Debug, Default)]
pub struct Graph {
    /// Sorted node names.
    pub nodes: Vec<String>,
    /// Edges by (from, to) index into `nodes`.
    pub edges: BTreeMap<(usize, usize), EdgeInfo>,
}

/// A strongly connected component of two or more nodes.
#[derive(Debug)]
pub struct Cycle {
    pub nodes: Vec<String>,
    /// The edges between its nodes: (from, to, info).
    pub edges: Vec<(String, String, EdgeInfo)>,
}

/// How deep re-export chains are followed before giving up.
const MAX_HOPS: u32 = 16;

/// Resolves a path written in module `from` to the module that defines what
/// it names; `None` when it names nothing in this crate (another crate, a
/// local variable, a generic parameter).
pub fn resolve(tree: &CrateTree, from: usize, path: &[String]) -> Option<usize> {
    resolve_hops(tree, from, path, 0)
}

fn resolve_hops(tree: &CrateTree, from: usize, path: &[String], hops: u32) -> Option<usize> {
    if hops > MAX_HOPS || path.is_empty() {
        return None;
    }
    let mut cur = from;
    let mut rest = path;
    // Leading `crate`, `self`, `super`: the path is anchored in this crate.
    let mut anchored = false;
    while let Some(first) = rest.first() {
        match first.as_str() {
            "crate" => cur = 0,
            "self" => {}
            "super" => cur = tree.modules[cur].parent?,
            _ => break,
        }
        anchored = true;
        rest = &rest[1..];
    }
    let mut moved = anchored;
    while let Some(seg) = rest.first() {
        let module = &tree.modules[cur];
        if let Some(&child) = module.children.get(seg) {
            cur = child;
            rest = &rest[1..];
            moved = true;
            continue;
        }
        if module.items.contains(seg) {
            return Some(cur);
        }
        if let Some(import) = module.imports.get(seg) {
            let mut full = import.clone();
            full.extend_from_slice(&rest[1..]);
            return match resolve_hops(tree, cur, &full, hops + 1) {
                Some(t) => Some(t),
                None if moved => Some(cur),
                None => None,
            };
        }
        for glob in &module.globs {
            let Some(base) = resolve_hops(tree, cur, glob, hops + 1) else {
                continue;
            };
            if provides(tree, base, seg, hops + 1) {
                return resolve_hops(tree, base, rest, hops + 1).or(Some(base));
            }
        }
        // Not found: anchored in this crate, the deepest module reached
        // stands for it (an item made by a macro, say); otherwise the path
        // belongs to something else.
        return if moved { Some(cur) } else { None };
    }
    Some(cur)
}

/// Whether module `m` has `name` in scope for paths through it.
fn provides(tree: &CrateTree, m: usize, name: &str, hops: u32) -> bool {
    if hops > MAX_HOPS {
        return false;
    }
    let module = &tree.modules[m];
    if module.children.contains_key(name)
        || module.items.contains(name)
        || module.imports.contains_key(name)
    {
        return true;
    }
    module.globs.iter().any(|g| {
        resolve_hops(tree, m, g, hops + 1).is_some_and(|b| provides(tree, b, name, hops + 1))
    })
}

/// Builds the node graph of a target.
pub fn build(tree: &CrateTree, gran: &Granularity) -> Graph {
    let node_of: Vec<Vec<String>> = tree.modules.iter().map(|m| gran.node(&m.path)).collect();
    let mut names: Vec<String> = node_of.iter().map(|p| node_name(p)).collect();
    names.sort();
    names.dedup();
    let index = |p: &[String]| names.binary_search(&node_name(p)).expect("node listed");
    let mut edges: BTreeMap<(usize, usize), EdgeInfo> = BTreeMap::new();
    for (id, module) in tree.modules.iter().enumerate() {
        let from = index(&node_of[id]);
        for r in &module.refs {
            let Some(target) = resolve(tree, id, &r.path) else {
                continue;
            };
            let to = index(&node_of[target]);
            if from == to {
                continue;
            }
            edges
                .entry((from, to))
                .and_modify(|e| e.count += 1)
                .or_insert_with(|| EdgeInfo {
                    count: 1,
                    example: (tree.files[r.file].path.clone(), r.line),
                });
        }
    }
    Graph {
        nodes: names,
        edges,
    }
}

/// The graph's strongly connected components of two or more nodes, each
/// with the edges inside it, largest first.
pub fn cycles(graph: &Graph) -> Vec<Cycle> {
    let n = graph.nodes.len();
    let mut adj = vec![Vec::new(); n];
    for &(a, b) in graph.edges.keys() {
        adj[a].push(b);
    }
    let comps = tarjan(&adj);
    let mut out: Vec<Cycle> = comps
        .into_iter()
        .filter(|c| c.len() > 1)
        .map(|mut comp| {
            comp.sort();
            let edges = graph
                .edges
                .iter()
                .filter(|((a, b), _)| {
                    comp.binary_search(a).is_ok() && comp.binary_search(b).is_ok()
                })
                .map(|((a, b), e)| (graph.nodes[*a].clone(), graph.nodes[*b].clone(), e.clone()))
                .collect();
            Cycle {
                nodes: comp.iter().map(|&i| graph.nodes[i].clone()).collect(),
                edges,
            }
        })
        .collect();
    out.sort_by(|a, b| {
        b.nodes
            .len()
            .cmp(&a.nodes.len())
            .then(a.nodes.cmp(&b.nodes))
    });
    out
}

/// Tarjan's strongly connected components (iterative).
fn tarjan(adj: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let n = adj.len();
    let mut index = vec![usize::MAX; n];
    let mut low = vec![0; n];
    let mut on_stack = vec![false; n];
    let mut stack = Vec::new();
    let mut comps = Vec::new();
    let mut next = 0;
    for root in 0..n {
        if index[root] != usize::MAX {
            continue;
        }
        // (node, position in its adjacency list)
        let mut work = vec![(root, 0usize)];
        index[root] = next;
        low[root] = next;
        next += 1;
        stack.push(root);
        on_stack[root] = true;
        while let Some(top) = work.last_mut() {
            let v = top.0;
            if let Some(&w) = adj[v].get(top.1) {
                top.1 += 1;
                if index[w] == usize::MAX {
                    index[w] = next;
                    low[w] = next;
                    next += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    work.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            work.pop();
            if let Some(&(parent, _)) = work.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == index[v] {
                let mut comp = Vec::new();
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    comp.push(w);
                    if w == v {
                        break;
                    }
                }
                comps.push(comp);
            }
        }
    }
    comps
}
