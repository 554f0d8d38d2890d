//! A captured partition's kernels, read out of its CUDA graph so that a
//! replay can launch them one by one, each as its capture launched it.
//!
//! A graph launch cannot overlap the work before it: the graph's first
//! kernel starts once the previous call's last kernel has drained, and the
//! graph launch itself takes the GPU a microsecond or two. Kernels launched
//! into the stream can: symm's kernels wait for the grids before them
//! (`symm-wait-for-prior-grids`), so each launches programmatically and its
//! blocks become resident, prefetch their weight's first lines and wait
//! while the grid before drains, the previous call's included. On 2x H200
//! at TP 2 (3 weight copies), calls of the Llama MLP block that ran eagerly
//! took 46.9 µs at 1 row and 53.0 at 16, against 47.9 and 55.3 as graph
//! replays (bench/results/2026-11-28-replay-launches-h200x2.md). But an
//! eager call also runs the compiled body on the host (argument checks,
//! the runtime's bookkeeping, cuBLAS's host code): the decoder half-layer
//! ran 74.4 µs a call eagerly at one row against 59.4 replayed, the same
//! kernels, so the difference is the host's.
//! A launch list replays only the launches: a few µs of host per kernel.
//!
//! A graph is read when its nodes are kernels in a chain (one stream's
//! capture), at least one of them symm's. A library's kernel (cuBLAS's)
//! launches with its node's attributes where they differ from a plain
//! launch of one of symm's (its cluster shape, priority, carveout...); a
//! node that sets an attribute a launch cannot carry (an event), a node of
//! another kind (a memset), or a kernel whose parameters the driver does
//! not describe keeps the graph, and `LaunchList::of` says why.

use crate::cuda::{Graph, Stream, check};
use crate::error::Result;
use crate::programmatic_launch::waits_for_prior_grids;
use cudarc::driver::sys::{self, CUresult};
use std::ffi::{CStr, c_void};

/// One kernel launch of the list: its function, shape, arguments (copied
/// out of the graph) and launch attributes (programmatic launch, and what
/// its node carries beyond a plain launch: a library kernel's cluster).
struct Launch {
    function: sys::CUfunction,
    grid: [u32; 3],
    block: [u32; 3],
    shared_memory: u32,
    attributes: Vec<sys::CUlaunchAttribute>,
    arguments: Arguments,
}

use sys::CUlaunchAttributeID as Id;

/// The attribute of a programmatic launch.
const PROGRAMMATIC: Id = crate::programmatic_launch::ATTRIBUTE_ID;

impl Launch {
    /// Whether it launches programmatically (overlapping the grid before).
    fn is_programmatic(&self) -> bool {
        self.attributes.iter().any(|a| a.id == PROGRAMMATIC)
    }
}

/// The kernel node attributes a launch takes over from its node where they
/// differ from a plain launch's. (Programmatic launch comes from the
/// graph's edges.)
const CARRIED: [Id; 10] = [
    Id::CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW,
    Id::CU_LAUNCH_ATTRIBUTE_COOPERATIVE,
    Id::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION,
    Id::CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE,
    Id::CU_LAUNCH_ATTRIBUTE_PRIORITY,
    Id::CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP,
    Id::CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN,
    Id::CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION,
    Id::CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
    Id::CU_LAUNCH_ATTRIBUTE_NVLINK_UTIL_CENTRIC_SCHEDULING,
];
/// Attributes a launch cannot take over (a programmatic or completion
/// event, a device-updatable node): a node that sets one replays as a graph.
const REFUSED: [Id; 3] = [
    Id::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT,
    Id::CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT,
    Id::CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE,
];

/// Attribute `id`'s value on kernel node `node`, None where the driver has
/// none for it.
fn node_attribute(node: sys::CUgraphNode, id: Id) -> Option<sys::CUlaunchAttributeValue> {
    // SAFETY: an all-zero value is valid; a live node; out-pointer to a local.
    let mut value: sys::CUlaunchAttributeValue = unsafe { std::mem::zeroed() };
    let status = unsafe { sys::cuGraphKernelNodeGetAttribute(node, id, &mut value) };
    (status == CUresult::CUDA_SUCCESS).then_some(value)
}

/// A kernel node's attributes of `ids` that the driver has values for.
fn node_attributes(node: sys::CUgraphNode, ids: &[Id]) -> Vec<(Id, sys::CUlaunchAttributeValue)> {
    ids.iter()
        .filter_map(|&id| node_attribute(node, id).map(|value| (id, value)))
        .collect()
}

/// A value's bytes, to compare.
fn value_bytes(value: &sys::CUlaunchAttributeValue) -> [std::ffi::c_char; 64] {
    // SAFETY: every value is read through its 64-byte pad (zeroed first).
    unsafe { value.pad }
}

/// A kernel's argument values, copied out of its node: each at its offset
/// in 16-byte aligned storage with a pointer to each (`cuLaunchKernel`'s
/// `kernelParams`), or as one packed buffer handed over by an `extra`
/// array (as cuBLAS launches its kernels).
struct Arguments {
    /// Never read directly: `pointers` or `extra` point into it.
    _storage: Box<[u128]>,
    pointers: Vec<*mut c_void>,
    /// The packed buffer's size, which `extra` points to.
    _packed_bytes: Box<usize>,
    extra: Vec<*mut c_void>,
}

impl Arguments {
    /// Storage for `bytes` bytes, 16-byte aligned.
    fn storage(bytes: usize) -> Box<[u128]> {
        vec![0u128; bytes.div_ceil(16)].into_boxed_slice()
    }

    /// Copies the values `sources` point to, of the sizes and at the
    /// offsets of `layout` (`cuFuncGetParamInfo`'s).
    ///
    /// # Safety
    /// Each source points to at least its parameter's size of bytes.
    unsafe fn copied(layout: &[(usize, usize)], sources: &[*const u8]) -> Self {
        let bytes = layout
            .iter()
            .map(|&(offset, size)| offset + size)
            .max()
            .unwrap_or(0);
        let mut storage = Self::storage(bytes);
        let base = storage.as_mut_ptr().cast::<u8>();
        let pointers = layout
            .iter()
            .zip(sources)
            .map(|(&(offset, size), &source)| {
                // SAFETY: the storage holds offset + size bytes; the caller's
                // source holds size bytes.
                unsafe {
                    std::ptr::copy_nonoverlapping(source, base.add(offset), size);
                    base.add(offset).cast::<c_void>()
                }
            })
            .collect();
        Self {
            _storage: storage,
            pointers,
            _packed_bytes: Box::new(0),
            extra: Vec::new(),
        }
    }

    /// Copies the packed buffer of `bytes` bytes at `buffer`.
    ///
    /// # Safety
    /// `buffer` holds `bytes` bytes.
    unsafe fn packed(buffer: *const u8, bytes: usize) -> Self {
        let mut storage = Self::storage(bytes);
        // SAFETY: the caller's buffer and the storage both hold `bytes`.
        unsafe { std::ptr::copy_nonoverlapping(buffer, storage.as_mut_ptr().cast::<u8>(), bytes) };
        let mut packed_bytes = Box::new(bytes);
        let key = |k: u32| k as usize as *mut c_void;
        let extra = vec![
            key(sys::CU_LAUNCH_PARAM_BUFFER_POINTER_AS_INT),
            storage.as_mut_ptr().cast::<c_void>(),
            key(sys::CU_LAUNCH_PARAM_BUFFER_SIZE_AS_INT),
            (&mut *packed_bytes as *mut usize).cast::<c_void>(),
            key(sys::CU_LAUNCH_PARAM_END_AS_INT),
        ];
        Self {
            _storage: storage,
            pointers: Vec::new(),
            _packed_bytes: packed_bytes,
            extra,
        }
    }

    /// `cuLaunchKernel`'s `kernelParams` and `extra` for these arguments.
    fn launch_arrays(&self) -> (*mut *mut c_void, *mut *mut c_void) {
        let array = |v: &Vec<*mut c_void>| match v.is_empty() {
            true => std::ptr::null_mut(),
            false => v.as_ptr() as *mut *mut c_void,
        };
        (array(&self.pointers), array(&self.extra))
    }
}

/// The packed buffer an `extra` array hands over (its address and size),
/// or why it cannot be read.
///
/// # Safety
/// `extra` is a driver `extra` array: key/value pairs ending with
/// `CU_LAUNCH_PARAM_END`.
unsafe fn packed_buffer(
    extra: *const *mut c_void,
) -> std::result::Result<(*const u8, usize), String> {
    let (mut buffer, mut bytes) = (None, None);
    for pair in 0..8 {
        // SAFETY: the caller's array, read up to its end marker.
        let key = unsafe { *extra.add(2 * pair) } as usize as u32;
        match key {
            sys::CU_LAUNCH_PARAM_END_AS_INT => break,
            sys::CU_LAUNCH_PARAM_BUFFER_POINTER_AS_INT => {
                // SAFETY: as above.
                buffer = Some(unsafe { *extra.add(2 * pair + 1) } as *const u8);
            }
            sys::CU_LAUNCH_PARAM_BUFFER_SIZE_AS_INT => {
                // SAFETY: this key's value points to a size_t.
                bytes = Some(unsafe { *(*extra.add(2 * pair + 1) as *const usize) });
            }
            other => return Err(format!("an `extra` entry of key {other}")),
        }
    }
    match (buffer, bytes) {
        (Some(buffer), Some(bytes)) if !buffer.is_null() && bytes > 0 => Ok((buffer, bytes)),
        _ => Err("an `extra` array without its buffer and size".into()),
    }
}

/// How one node of a captured graph depends on the one before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Edge {
    /// After the whole grid before.
    Full,
    /// Once the grid before lets it (programmatic dependent launch).
    Programmatic,
}

/// The order of a graph's `nodes` nodes where the `edges` (from, to,
/// kind) make one chain, with the edge into each (None for the first);
/// otherwise why not.
pub fn chain(
    nodes: usize,
    edges: &[(usize, usize, Edge)],
) -> std::result::Result<Vec<(usize, Option<Edge>)>, String> {
    if nodes == 0 {
        return Err("the graph is empty".into());
    }
    if edges.len() != nodes - 1 {
        return Err(format!(
            "{nodes} nodes and {} edges are not one chain",
            edges.len()
        ));
    }
    let mut next: Vec<Option<(usize, Edge)>> = vec![None; nodes];
    let mut into = vec![false; nodes];
    for &(from, to, kind) in edges {
        if from >= nodes || to >= nodes {
            return Err(format!(
                "an edge {from} -> {to} leaves the graph's {nodes} nodes"
            ));
        }
        if next[from].is_some() || into[to] {
            return Err("a node with two edges in or out: not one chain".into());
        }
        next[from] = Some((to, kind));
        into[to] = true;
    }
    let mut roots = (0..nodes).filter(|&node| !into[node]);
    let (Some(root), None) = (roots.next(), roots.next()) else {
        return Err("not one root: not one chain".into());
    };
    let mut order = vec![(root, None)];
    let mut at = root;
    while let Some((to, kind)) = next[at] {
        if order.len() == nodes {
            return Err("a cycle".into());
        }
        order.push((to, Some(kind)));
        at = to;
    }
    if order.len() != nodes {
        return Err("a node outside the chain".into());
    }
    Ok(order)
}

/// A captured graph's kernels, in order, ready to launch.
pub struct LaunchList {
    launches: Vec<Launch>,
}

impl LaunchList {
    /// The kernels of `graph`, or why it must replay as a graph: not one
    /// chain, a node that is not a kernel, no kernel compiled by symm, a
    /// node attribute a launch cannot carry, arguments the driver does not
    /// describe. A driver failure reading the graph is an error.
    pub fn of(graph: &Graph) -> Result<std::result::Result<Self, String>> {
        let raw = graph.raw();
        let mut count = 0usize;
        // SAFETY: a live graph; a null array asks for the count.
        check(
            unsafe { sys::cuGraphGetNodes(raw, std::ptr::null_mut(), &mut count) },
            "cuGraphGetNodes",
        )?;
        let mut nodes = vec![std::ptr::null_mut(); count];
        // SAFETY: room for `count` nodes.
        check(
            unsafe { sys::cuGraphGetNodes(raw, nodes.as_mut_ptr(), &mut count) },
            "cuGraphGetNodes",
        )?;
        let mut edge_count = 0usize;
        // SAFETY: null arrays ask for the count.
        check(
            unsafe {
                sys::cuGraphGetEdges_v2(
                    raw,
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                    &mut edge_count,
                )
            },
            "cuGraphGetEdges",
        )?;
        let mut from = vec![std::ptr::null_mut(); edge_count];
        let mut to = vec![std::ptr::null_mut(); edge_count];
        // SAFETY: an all-zero edge datum is a valid value.
        let mut data = vec![unsafe { std::mem::zeroed::<sys::CUgraphEdgeData>() }; edge_count];
        // SAFETY: room for `edge_count` edges in each array.
        check(
            unsafe {
                sys::cuGraphGetEdges_v2(
                    raw,
                    from.as_mut_ptr(),
                    to.as_mut_ptr(),
                    data.as_mut_ptr(),
                    &mut edge_count,
                )
            },
            "cuGraphGetEdges",
        )?;
        let index = |node: sys::CUgraphNode| nodes.iter().position(|&n| n == node);
        let mut edges = Vec::with_capacity(edge_count);
        for ((&f, &t), datum) in from.iter().zip(&to).zip(&data) {
            let (Some(f), Some(t)) = (index(f), index(t)) else {
                return Ok(Err("an edge to a node the graph does not list".into()));
            };
            let programmatic =
                sys::CUgraphDependencyType::CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC as u8;
            let kind = match (datum.type_, datum.from_port as u32) {
                (0, sys::CU_GRAPH_KERNEL_NODE_PORT_DEFAULT) => Edge::Full,
                (kind, _) if kind == programmatic => Edge::Programmatic,
                (kind, port) => {
                    return Ok(Err(format!("an edge of type {kind} from port {port}")));
                }
            };
            edges.push((f, t, kind));
        }
        let order = match chain(nodes.len(), &edges) {
            Ok(order) => order,
            Err(why) => return Ok(Err(why)),
        };
        // A plain launch's attribute values: those of a kernel of symm's,
        // launched with no attribute but the programmatic one (an edge).
        let kernels: Vec<sys::CUgraphNode> = order.iter().map(|&(at, _)| nodes[at]).collect();
        let mut plain = None;
        for &node in &kernels {
            match kernel_function(node)? {
                Err(why) => return Ok(Err(why)),
                // SAFETY: a live function.
                Ok((function, _)) if unsafe { waits_for_prior_grids(function) } => {
                    plain = Some(node_attributes(
                        node,
                        &[&CARRIED[..], &REFUSED[..]].concat(),
                    ));
                    break;
                }
                Ok(_) => {}
            }
        }
        let Some(plain) = plain else {
            return Ok(Err("no kernel compiled by symm".into()));
        };
        let mut launches = Vec::with_capacity(order.len());
        for ((_, edge), node) in order.into_iter().zip(kernels) {
            match Self::launch_of(node, edge, &plain)? {
                Ok(launch) => launches.push(launch),
                Err(why) => return Ok(Err(why)),
            }
        }
        Ok(Ok(Self { launches }))
    }

    /// The launch of kernel node `node`, entered by `edge` (None: the
    /// graph's first, which launches as the compiled body launches its
    /// first kernel: programmatically where allowed), with the attributes
    /// where it differs from `plain` (a plain launch's values).
    fn launch_of(
        node: sys::CUgraphNode,
        edge: Option<Edge>,
        plain: &[(Id, sys::CUlaunchAttributeValue)],
    ) -> Result<std::result::Result<Launch, String>> {
        let (function, params) = match kernel_function(node)? {
            Ok(kernel) => kernel,
            Err(why) => return Ok(Err(why)),
        };
        let name = || function_name(function);
        let arguments = if !params.extra.is_null() {
            // SAFETY: the node's `extra` array as the capture passed it.
            match unsafe { packed_buffer(params.extra) } {
                // SAFETY: the node's buffer of that size.
                Ok((buffer, bytes)) => unsafe { Arguments::packed(buffer, bytes) },
                Err(why) => return Ok(Err(format!("kernel {}: {why}", name()))),
            }
        } else {
            // A kernel without parameters, or whose parameters the driver
            // does not describe, is not taken: its node's argument array
            // has no length of its own.
            let layout = parameter_layout(function)?;
            if layout.is_empty() || params.kernelParams.is_null() {
                return Ok(Err(format!(
                    "kernel {}'s arguments are not described",
                    name()
                )));
            }
            // SAFETY: the node holds a pointer per parameter, each to a
            // value of the parameter's size.
            let sources: Vec<*const u8> = (0..layout.len())
                .map(|i| unsafe { *params.kernelParams.add(i) as *const u8 })
                .collect();
            // SAFETY: as above.
            unsafe { Arguments::copied(&layout, &sources) }
        };
        let mut attributes = Vec::new();
        for (id, value) in node_attributes(node, &[&CARRIED[..], &REFUSED[..]].concat()) {
            let same = plain.iter().any(|(plain_id, plain_value)| {
                *plain_id == id && value_bytes(plain_value) == value_bytes(&value)
            });
            if same {
                continue;
            }
            if REFUSED.contains(&id) {
                return Ok(Err(format!("kernel {}'s node sets {id:?}", name())));
            }
            attributes.push(sys::CUlaunchAttribute {
                id,
                pad: [0; 4],
                value,
            });
        }
        let programmatic = match edge {
            Some(edge) => edge == Edge::Programmatic,
            // SAFETY: a live function.
            None => unsafe { crate::programmatic_launch::allowed(function) },
        };
        if programmatic {
            attributes.push(crate::programmatic_launch::attribute());
        }
        Ok(Ok(Launch {
            function,
            grid: [params.gridDimX, params.gridDimY, params.gridDimZ],
            block: [params.blockDimX, params.blockDimY, params.blockDimZ],
            shared_memory: params.sharedMemBytes,
            attributes,
            arguments,
        }))
    }

    /// How many kernels the list launches.
    pub fn len(&self) -> usize {
        self.launches.len()
    }

    /// How many of its kernels after the first wait for the whole grid
    /// before them (an edge that is not programmatic: after a library's
    /// kernel, or with `SYMM_PDL=0`). There a launch cannot overlap the
    /// grid before, and a graph's node starts sooner than a stream's launch:
    /// on 2x H200 lists with such edges ran the decoder at 128 rows 4.9 µs
    /// slower than its graph (bench/results/2026-11-28-replay-launches-h200x2.md).
    pub fn whole_grid_waits(&self) -> usize {
        self.launches
            .iter()
            .skip(1)
            .filter(|launch| !launch.is_programmatic())
            .count()
    }

    /// How many of its kernels carry node attributes beyond the
    /// programmatic launch (a library's cluster shape, say).
    pub fn with_attributes(&self) -> usize {
        self.launches
            .iter()
            .filter(|launch| launch.attributes.iter().any(|a| a.id != PROGRAMMATIC))
            .count()
    }

    /// Whether the list launches nothing (never: an empty graph has no
    /// list).
    pub fn is_empty(&self) -> bool {
        self.launches.is_empty()
    }

    /// Launches the kernels on `stream`, in order; a failed launch stops
    /// the list and is the error (naming the kernel).
    pub fn launch(&self, stream: &Stream) -> Result<()> {
        for launch in &self.launches {
            // SAFETY: a live function with the arguments and attributes its
            // capture launched it with; programmatic only where the
            // capture's edge was, or for a first kernel that waits for
            // prior grids.
            let status = unsafe {
                crate::programmatic_launch::launch_with(
                    launch.function,
                    (launch.grid, launch.block, launch.shared_memory),
                    stream.raw,
                    &launch.attributes,
                    launch.arguments.launch_arrays(),
                )
            };
            if status != CUresult::CUDA_SUCCESS {
                let what = format!(
                    "launching {} from a graph's launch list",
                    function_name(launch.function)
                );
                check(status, &what)?;
            }
        }
        Ok(())
    }
}

/// Kernel node `node`'s function and parameters, or why it has none (a node
/// of another kind).
#[allow(clippy::type_complexity)]
fn kernel_function(
    node: sys::CUgraphNode,
) -> Result<std::result::Result<(sys::CUfunction, sys::CUDA_KERNEL_NODE_PARAMS), String>> {
    let mut kind = sys::CUgraphNodeType::CU_GRAPH_NODE_TYPE_EMPTY;
    // SAFETY: a live node; out-pointer to a local.
    check(
        unsafe { sys::cuGraphNodeGetType(node, &mut kind) },
        "cuGraphNodeGetType",
    )?;
    if kind != sys::CUgraphNodeType::CU_GRAPH_NODE_TYPE_KERNEL {
        return Ok(Err(format!("a node of type {kind:?}")));
    }
    // SAFETY: all-zero parameters are a valid value to fill.
    let mut params: sys::CUDA_KERNEL_NODE_PARAMS = unsafe { std::mem::zeroed() };
    // SAFETY: a kernel node; out-pointer to a local.
    check(
        unsafe { sys::cuGraphKernelNodeGetParams_v2(node, &mut params) },
        "cuGraphKernelNodeGetParams",
    )?;
    let mut function = params.func;
    if function.is_null() && !params.kern.is_null() {
        // SAFETY: a live kernel handle; out-pointer to a local.
        check(
            unsafe { sys::cuKernelGetFunction(&mut function, params.kern) },
            "cuKernelGetFunction",
        )?;
    }
    if function.is_null() {
        return Ok(Err("a kernel node without a function".into()));
    }
    Ok(Ok((function, params)))
}

/// The (offset, size) of each of `function`'s parameters.
fn parameter_layout(function: sys::CUfunction) -> Result<Vec<(usize, usize)>> {
    let mut layout = Vec::new();
    loop {
        let (mut offset, mut size) = (0usize, 0usize);
        // SAFETY: a live function; out-pointers to locals.
        let status =
            unsafe { sys::cuFuncGetParamInfo(function, layout.len(), &mut offset, &mut size) };
        match status {
            CUresult::CUDA_SUCCESS => layout.push((offset, size)),
            // Past the last parameter.
            CUresult::CUDA_ERROR_INVALID_VALUE => return Ok(layout),
            other => {
                check(other, "cuFuncGetParamInfo")?;
            }
        }
    }
}

/// `function`'s name, for messages.
fn function_name(function: sys::CUfunction) -> String {
    let mut name = std::ptr::null();
    // SAFETY: a live function; the driver owns the returned string.
    let status = unsafe { sys::cuFuncGetName(&mut name, function) };
    if status != CUresult::CUDA_SUCCESS || name.is_null() {
        return "(unnamed)".into();
    }
    // SAFETY: a NUL-terminated string the driver keeps.
    unsafe { CStr::from_ptr(name) }
        .to_string_lossy()
        .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chain_comes_out_in_order_with_its_edges() {
        // Nodes listed out of order: 2 -> 0 -> 1.
        let order = chain(3, &[(0, 1, Edge::Programmatic), (2, 0, Edge::Full)]).unwrap();
        assert_eq!(
            order,
            vec![
                (2, None),
                (0, Some(Edge::Full)),
                (1, Some(Edge::Programmatic))
            ]
        );
        assert_eq!(chain(1, &[]).unwrap(), vec![(0, None)]);
    }

    #[test]
    fn anything_but_one_chain_is_refused_with_a_reason() {
        assert!(chain(0, &[]).unwrap_err().contains("empty"));
        // A fork: 0 -> 1 and 0 -> 2.
        let fork = chain(3, &[(0, 1, Edge::Full), (0, 2, Edge::Full)]);
        assert!(fork.unwrap_err().contains("two edges"));
        // Two roots.
        assert!(
            chain(3, &[(0, 2, Edge::Full)])
                .unwrap_err()
                .contains("not one chain")
        );
        // A cycle beside a root: 0, and 1 <-> 2.
        let cycle = chain(3, &[(1, 2, Edge::Full), (2, 1, Edge::Full)]);
        assert!(cycle.is_err());
        assert!(
            chain(2, &[(0, 5, Edge::Full)])
                .unwrap_err()
                .contains("leaves")
        );
    }

    #[test]
    fn arguments_keep_their_offsets_and_sizes() {
        let (pointer, count, scale) = (0x7f00_1234_5678u64, 3i32, 0.5f32);
        // A pointer at 0, an int at 8, a float at 12.
        let layout = [(0, 8), (8, 4), (12, 4)];
        let sources = [
            (&pointer as *const u64).cast::<u8>(),
            (&count as *const i32).cast::<u8>(),
            (&scale as *const f32).cast::<u8>(),
        ];
        // SAFETY: each source holds its size of bytes.
        let arguments = unsafe { Arguments::copied(&layout, &sources) };
        // SAFETY: the pointers point at the copies, of the same types.
        unsafe {
            assert_eq!(*arguments.pointers[0].cast::<u64>(), pointer);
            assert_eq!(*arguments.pointers[1].cast::<i32>(), count);
            assert_eq!(*arguments.pointers[2].cast::<f32>(), scale);
        }
        assert_eq!(arguments.pointers[0] as usize % 16, 0);
        // SAFETY: no parameters, nothing read.
        let none = unsafe { Arguments::copied(&[], &[]) };
        assert!(none.pointers.is_empty());
        let nothing = std::ptr::null_mut();
        assert_eq!(none.launch_arrays(), (nothing, nothing));
    }

    /// A launch of nothing (never launched) with `attributes`.
    fn test_launch(attributes: Vec<sys::CUlaunchAttribute>) -> Launch {
        Launch {
            function: std::ptr::null_mut(),
            grid: [1; 3],
            block: [1; 3],
            shared_memory: 0,
            attributes,
            // SAFETY: no parameters, nothing read.
            arguments: unsafe { Arguments::copied(&[], &[]) },
        }
    }

    #[test]
    fn only_launches_after_the_first_that_wait_for_the_whole_grid_count() {
        // SAFETY: an all-zero value is valid.
        let cluster = sys::CUlaunchAttribute {
            id: Id::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION,
            pad: [0; 4],
            value: unsafe { std::mem::zeroed() },
        };
        // symm's kernels: the first plain (it follows the application's
        // work), the rest programmatic.
        let ours = LaunchList {
            launches: vec![
                test_launch(vec![]),
                test_launch(vec![crate::programmatic_launch::attribute()]),
                test_launch(vec![crate::programmatic_launch::attribute()]),
            ],
        };
        assert_eq!((ours.whole_grid_waits(), ours.with_attributes()), (0, 0));
        // A library's kernel with its cluster, and ours after it waiting
        // for its whole grid.
        let with_library = LaunchList {
            launches: vec![
                test_launch(vec![crate::programmatic_launch::attribute()]),
                test_launch(vec![cluster]),
                test_launch(vec![]),
            ],
        };
        assert_eq!(with_library.whole_grid_waits(), 2);
        assert_eq!(with_library.with_attributes(), 1);
        assert_eq!(with_library.len(), 3);
    }

    #[test]
    fn a_packed_buffer_is_copied_and_handed_over_by_its_own_extra_array() {
        let buffer: Vec<u8> = (0..40).collect();
        let mut size = buffer.len();
        let key = |k: u32| k as usize as *mut c_void;
        let extra = [
            key(sys::CU_LAUNCH_PARAM_BUFFER_POINTER_AS_INT),
            buffer.as_ptr() as *mut c_void,
            key(sys::CU_LAUNCH_PARAM_BUFFER_SIZE_AS_INT),
            (&mut size as *mut usize).cast::<c_void>(),
            key(sys::CU_LAUNCH_PARAM_END_AS_INT),
        ];
        // SAFETY: a well-formed array over live values.
        let (at, bytes) = unsafe { packed_buffer(extra.as_ptr()) }.unwrap();
        assert_eq!((at, bytes), (buffer.as_ptr(), 40));
        // SAFETY: the buffer holds 40 bytes.
        let arguments = unsafe { Arguments::packed(at, bytes) };
        let (params, own) = arguments.launch_arrays();
        assert!(params.is_null());
        // SAFETY: the copy's array: pointer key, buffer, size key, size, end.
        unsafe {
            let copy = std::slice::from_raw_parts(*own.add(1) as *const u8, 40);
            assert_eq!(copy, &buffer[..]);
            assert_ne!(*own.add(1) as *const u8, buffer.as_ptr());
            assert_eq!(*(*own.add(3) as *const usize), 40);
            assert!((*own.add(4)).is_null());
        }
        // An array without its size, or with a key of another meaning.
        let end = key(sys::CU_LAUNCH_PARAM_END_AS_INT);
        let partial = [extra[0], extra[1], end];
        // SAFETY: well-formed arrays.
        let missing = unsafe { packed_buffer(partial.as_ptr()) }.unwrap_err();
        assert!(missing.contains("size"), "{missing}");
        let odd = [key(7), extra[1], end];
        // SAFETY: as above.
        let other = unsafe { packed_buffer(odd.as_ptr()) }.unwrap_err();
        assert!(other.contains("key 7"), "{other}");
    }
}
