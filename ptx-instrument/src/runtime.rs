//! The recording runtime, in PTX, added to every instrumented module.
//!
//! The same logic as `device-rt/src/prlx_record.inc` (which the pass
//! inlines), written once per module as three `.func`s that the probes call:
//! the descriptor `__prlx_desc` (64 bytes, `device-rt/README.md`), warp slot
//! from block and thread indices, the leader (lowest active lane) claiming an
//! event slot with one atomic, sampling, overflow accounting, the history
//! ring, and the per-lane snapshot ring. Each function tests its
//! descriptor's `trace` once, into [`RECORDING_REGISTER`]; every probe
//! branches past itself when that is false. A module that is not being
//! captured does not get that far: each function first runs the idle test
//! of [`crate::idle_copy`] and, when `__prlx_desc`'s [`ARMED_OFFSET`] word
//! is zero, its uninstrumented copy (3 warp instructions per call, whatever
//! it visits).

use std::fmt::Write as _;

/// The descriptor's name; the shim finds it with `cuModuleGetGlobal`.
pub const DESCRIPTOR: &str = "__prlx_desc";
pub const RECORD_BRANCH: &str = "__prlx_record_branch";
pub const RECORD_VALUE: &str = "__prlx_record_value";
pub const RECORD_SNAPSHOT: &str = "__prlx_record_snapshot";

/// `TraceEvent` flag bit 0 of the reserved half-word: `value_a` is the taken mask.
const TAKEN_MASK_FLAG: u32 = 1 << 16;

/// The register every instrumented function computes its warp slot into,
/// once, at its start ([`warp_slot_setup`]); each probe passes it to the
/// runtime as its last argument. (Computing it per event cost ~21
/// warp-instructions an event, which the pass's inlined runtime hoists out
/// of loops: collatz_steps ran 1.57× the pass's cost.)
pub const WARP_SLOT_REGISTER: &str = "%prlx_slot";

/// The register every instrumented function sets, at its start, to the
/// descriptor its probes record through: `__prlx_desc`, or in a graph
/// launch the descriptor of the launch table entry its grid claimed
/// ([`LAUNCH_TABLE`]).
pub const DESCRIPTOR_REGISTER: &str = "%prlx_dp";

/// The predicate every instrumented function sets, at its start, to
/// whether its descriptor records (its `trace` is non-zero). The
/// descriptor does not change while a kernel runs, so a probe tests this
/// register and branches past itself when it is false (a grid that found
/// no launch-table entry; a module not captured at all runs the idle copy,
/// [`crate::idle_copy`], or without it pays one uniform branch per site
/// visit).
pub const RECORDING_REGISTER: &str = "%prlx_on";

/// Several launches of one module recording at once (the kernel nodes of a
/// CUDA graph): `__prlx_desc`'s word at [`LAUNCH_COUNT_OFFSET`] says how
/// many entries of this table the host armed. Each entry is
/// [`LAUNCH_ENTRY_BYTES`]: the claiming grid's `%gridid` (u64, 0 =
/// unclaimed), the kernel's id ([`kernel_id`], u32), its grid and block
/// dimensions (6 × u32), then at [`LAUNCH_ENTRY_DESCRIPTOR`] a descriptor
/// laid out as `__prlx_desc`. A kernel's grid claims, with one
/// compare-and-swap, the first unclaimed entry armed for its kernel and
/// geometry; functions it calls find the entry by `%gridid`.
pub const LAUNCH_TABLE: &str = "__prlx_launches";
pub const LAUNCH_TABLE_ENTRIES: u32 = 16;
pub const LAUNCH_ENTRY_BYTES: u32 = 128;
pub const LAUNCH_ENTRY_DESCRIPTOR: u32 = 64;
/// `launch_count` of the descriptor (`device-rt/src/prlx_layout.h`).
pub const LAUNCH_COUNT_OFFSET: u32 = 44;
/// `armed` of the descriptor (`device-rt/src/prlx_layout.h`, u32): non-zero
/// exactly when the module records, through its own `trace` (a direct
/// launch) or through its launch table (a non-zero count at
/// [`LAUNCH_COUNT_OFFSET`]); the host writes it with either and clears it
/// with both. It exists for the idle test ([`crate::idle_copy`]): one word
/// to load instead of two (`trace` and the count are not adjacent), so an
/// idle call costs 3 warp instructions, as the pass's test of `trace` does.
/// Pass-built modules do not read it.
pub const ARMED_OFFSET: u32 = 48;

/// A kernel's id in the launch table: FNV-1a 32 of its name.
pub fn kernel_id(name: &str) -> u32 {
    crate::sites::fnv1a32(name.as_bytes(), 2_166_136_261)
}

/// Sets [`DESCRIPTOR_REGISTER`] (see [`LAUNCH_TABLE`]). `claim`: the kernel
/// `name` itself (`.entry`), which claims its grid's entry; otherwise a
/// function it calls, which only looks its grid's entry up. `tag` makes the
/// labels unique in the module.
pub fn descriptor_setup(claim: Option<&str>, tag: usize) -> String {
    let d = DESCRIPTOR_REGISTER;
    let mut out = format!(
        "// prlx: descriptor
	.reg .b64 	{d};
	.reg .pred 	{RECORDING_REGISTER};
	{{
	.reg .pred 	%prlx_q<3>;
	.reg .b32 	%prlx_t<12>;
	.reg .b64 	%prlx_u<4>;
	mov.u64 	{d}, {DESCRIPTOR};
	ld.global.u32 	%prlx_t0, [{DESCRIPTOR}+{LAUNCH_COUNT_OFFSET}];
	setp.eq.u32 	%prlx_q0, %prlx_t0, 0;
	@%prlx_q0 bra 	$__prlx_dp{tag}_done;
	mov.u64 	%prlx_u0, %gridid;
	mov.u64 	%prlx_u1, {LAUNCH_TABLE};
	mov.u32 	%prlx_t1, 0;
	mov.u64 	{d}, 0;
"
    );
    if let Some(name) = claim {
        let _ = write!(
            out,
            "	mov.u32 	%prlx_t2, {};
	mov.u32 	%prlx_t3, %nctaid.x;
	mov.u32 	%prlx_t4, %nctaid.y;
	mov.u32 	%prlx_t5, %nctaid.z;
	mov.u32 	%prlx_t6, %ntid.x;
	mov.u32 	%prlx_t7, %ntid.y;
	mov.u32 	%prlx_t8, %ntid.z;
",
            kernel_id(name)
        );
    }
    let _ = write!(
        out,
        "$__prlx_dp{tag}_loop:
	setp.ge.u32 	%prlx_q0, %prlx_t1, %prlx_t0;
	@%prlx_q0 bra 	$__prlx_dp{tag}_none;
	ld.volatile.global.u64 	%prlx_u2, [%prlx_u1];
	setp.eq.u64 	%prlx_q0, %prlx_u2, %prlx_u0;
	@%prlx_q0 bra 	$__prlx_dp{tag}_found;
"
    );
    if claim.is_some() {
        // An unclaimed entry armed for this kernel and geometry: claim it.
        out.push_str(
            "	setp.ne.u64 	%prlx_q0, %prlx_u2, 0;
",
        );
        for (i, offset) in [8, 12, 16, 20, 24, 28, 32].iter().enumerate() {
            let _ = writeln!(
                out,
                "	ld.global.u32 	%prlx_t9, [%prlx_u1+{offset}];
	setp.ne.or.u32 	%prlx_q0, %prlx_t9, %prlx_t{}, %prlx_q0;",
                i + 2
            );
        }
        let _ = write!(
            out,
            "	@%prlx_q0 bra 	$__prlx_dp{tag}_next;
	atom.global.cas.b64 	%prlx_u3, [%prlx_u1], 0, %prlx_u0;
	setp.eq.u64 	%prlx_q1, %prlx_u3, 0;
	setp.eq.or.u64 	%prlx_q1, %prlx_u3, %prlx_u0, %prlx_q1;
	@%prlx_q1 bra 	$__prlx_dp{tag}_found;
"
        );
    }
    let _ = write!(
        out,
        "$__prlx_dp{tag}_next:
	add.s64 	%prlx_u1, %prlx_u1, {LAUNCH_ENTRY_BYTES};
	add.s32 	%prlx_t1, %prlx_t1, 1;
	bra.uni 	$__prlx_dp{tag}_loop;
$__prlx_dp{tag}_found:
	add.s64 	{d}, %prlx_u1, {LAUNCH_ENTRY_DESCRIPTOR};
	bra.uni 	$__prlx_dp{tag}_done;
$__prlx_dp{tag}_none:
	mov.u64 	{d}, __prlx_desc_off;
$__prlx_dp{tag}_done:
	ld.global.u64 	%prlx_u0, [{d}];
	setp.ne.u64 	{RECORDING_REGISTER}, %prlx_u0, 0;
	}}
	"
    );
    out
}

/// Declares [`WARP_SLOT_REGISTER`] and sets it to
/// `linear_block * warps_per_block + linear_tid / 32` (`device-rt/README.md`,
/// "Warp slot"), with scratch registers of its own scope. Only when the
/// function records ([`RECORDING_REGISTER`], set by [`descriptor_setup`]
/// before it): the probes, which alone read the slot, are skipped otherwise.
pub fn warp_slot_setup() -> String {
    format!(
        "// prlx: warp slot
	.reg .b32 	{WARP_SLOT_REGISTER};
	{{
	.reg .b32 	%prlx_s<16>;
	@!{RECORDING_REGISTER} bra.uni 	$__prlx_slot_idle;
	mov.u32 	%prlx_s0, %ntid.x;
	mov.u32 	%prlx_s1, %ntid.y;
	mov.u32 	%prlx_s2, %ntid.z;
	mov.u32 	%prlx_s3, %tid.x;
	mov.u32 	%prlx_s4, %tid.y;
	mov.u32 	%prlx_s5, %tid.z;
	mad.lo.s32 	%prlx_s6, %prlx_s1, %prlx_s5, %prlx_s4;
	mad.lo.s32 	%prlx_s6, %prlx_s0, %prlx_s6, %prlx_s3;
	mul.lo.s32 	%prlx_s7, %prlx_s0, %prlx_s1;
	mul.lo.s32 	%prlx_s7, %prlx_s7, %prlx_s2;
	add.s32 	%prlx_s7, %prlx_s7, 31;
	shr.u32 	%prlx_s7, %prlx_s7, 5;
	mov.u32 	%prlx_s8, %ctaid.x;
	mov.u32 	%prlx_s9, %ctaid.y;
	mov.u32 	%prlx_s10, %ctaid.z;
	mov.u32 	%prlx_s11, %nctaid.x;
	mov.u32 	%prlx_s12, %nctaid.y;
	mad.lo.s32 	%prlx_s13, %prlx_s12, %prlx_s10, %prlx_s9;
	mad.lo.s32 	%prlx_s13, %prlx_s11, %prlx_s13, %prlx_s8;
	shr.u32 	%prlx_s14, %prlx_s6, 5;
	mad.lo.s32 	{WARP_SLOT_REGISTER}, %prlx_s13, %prlx_s7, %prlx_s14;
$__prlx_slot_idle:
	}}
	"
    )
}

/// One event, written by the leader lane (`prlx_emit`): site `%r1`,
/// type|dir|flags `%r6`, active mask `%r3`, value `%r7`; `%p9` is set in
/// the leader lane only. Every lane runs the same straight-line code and
/// only the leader's memory accesses are enabled (predicated), so recording
/// never splits the warp: the application's own divergence and the
/// scheduler's view of it stay as they were. Ends in `ret`.
fn emit(out: &mut String, label: &str) {
    out.push_str(
        "\tld.global.u64 	%rd2, [%rd1];
	ld.global.u32 	%r10, [%rd1+24];
	ld.global.u32 	%r11, [%rd1+28];
",
    );
    let _ = write!(
        out,
        "\tsetp.ge.u32 	%p4, %r27, %r11;
	@%p4 bra 	{label}_done;
	mul.wide.u32 	%rd3, %r10, 16;
	add.s64 	%rd3, %rd3, 16;
	cvt.u64.u32 	%rd4, %r27;
	mul.lo.s64 	%rd4, %rd4, %rd3;
	add.s64 	%rd4, %rd4, %rd2;
	add.s64 	%rd4, %rd4, 160;
	ld.global.u32 	%r28, [%rd1+40];
	setp.gt.u32 	%p5, %r28, 1;
	@!%p5 bra 	{label}_kept;
	mov.u32 	%r29, 0;
	@%p9 atom.global.add.u32 	%r29, [%rd4+12], 1;
	rem.u32 	%r29, %r29, %r28;
	setp.eq.and.u32 	%p9, %r29, 0, %p9;
{label}_kept:
	ld.global.u64 	%rd5, [%rd1+8];
	ld.global.u32 	%r30, [%rd1+32];
	setp.eq.u64 	%p7, %rd5, 0;
	setp.eq.or.u32 	%p7, %r30, 0, %p7;
	@%p7 bra 	{label}_logged;
	mul.wide.u32 	%rd6, %r30, 16;
	add.s64 	%rd6, %rd6, 16;
	cvt.u64.u32 	%rd7, %r27;
	mul.lo.s64 	%rd7, %rd7, %rd6;
	add.s64 	%rd7, %rd7, %rd5;
	mov.u32 	%r31, 0;
	@%p9 atom.global.add.u32 	%r31, [%rd7+8], 1;
	rem.u32 	%r32, %r31, %r30;
	mul.wide.u32 	%rd8, %r32, 16;
	add.s64 	%rd8, %rd8, %rd7;
	mov.u32 	%r35, 0;
	@%p9 st.global.u32 	[%rd8+16], %r1;
	@%p9 st.global.u32 	[%rd8+20], %r7;
	@%p9 st.global.u32 	[%rd8+24], %r31;
	@%p9 st.global.u32 	[%rd8+28], %r35;
	add.s32 	%r33, %r31, 1;
	rem.u32 	%r33, %r33, %r30;
	@%p9 st.global.u32 	[%rd7], %r33;
{label}_logged:
	mov.u32 	%r34, 0;
	@%p9 atom.global.add.u32 	%r34, [%rd4], 1;
	setp.lt.and.u32 	%p8, %r34, %r10, %p9;
	setp.ge.and.u32 	%p6, %r34, %r10, %p9;
	@%p6 red.global.add.u32 	[%rd4+4], 1;
	mul.wide.u32 	%rd9, %r34, 16;
	add.s64 	%rd9, %rd9, %rd4;
	@%p8 st.global.v4.u32 	[%rd9+16], {{%r1, %r6, %r3, %r7}};
{label}_done:
	ret;
"
    );
}

const LOCALS: &str = "\t.reg .pred 	%p<10>;
	.reg .b32 	%r<52>;
	.reg .b64 	%rd<12>;
";

/// Where an instrumented module's runtime and descriptor come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Runtime {
    /// A module loaded on its own: it defines them (module-local functions).
    Own,
    /// One input of a `cuLink*` link, the one that defines them (visible,
    /// so the other inputs link against them).
    LinkDefine,
    /// Another input of that link: it declares them `.extern`.
    LinkExtern,
}

/// The descriptor and the recording functions as a module needs them
/// ([`Runtime`]): defined module-locally, defined visibly
/// for the other inputs of a link, or declared `.extern` (an input of a
/// link that another input gives them to).
pub fn runtime_ptx_for(runtime: Runtime) -> String {
    let own = runtime_ptx();
    match runtime {
        Runtime::Own => own,
        Runtime::LinkDefine => own.replace("\n.func ", "\n.visible .func "),
        Runtime::LinkExtern => {
            let mut out =
                String::from("// prlx: recording runtime, defined by another input of this link\n");
            let _ = writeln!(out, ".extern .global .align 8 .b8 {DESCRIPTOR}[64];");
            let _ = writeln!(
                out,
                ".extern .global .align 8 .b8 {LAUNCH_TABLE}[{}];",
                LAUNCH_TABLE_ENTRIES * LAUNCH_ENTRY_BYTES
            );
            out.push_str(".extern .global .align 8 .b8 __prlx_desc_off[64];\n");
            let mut rest = own.as_str();
            while let Some(at) = rest.find("\n.func ") {
                let signature = &rest[at + 1..];
                let end = signature.find(')').map_or(signature.len(), |e| e + 1);
                let _ = writeln!(out, ".extern {};", &signature[..end]);
                rest = &signature[end..];
            }
            out.push('\n');
            out
        }
    }
}

/// The descriptor and the three recording functions, as PTX text to place
/// before the module's first function or variable.
pub fn runtime_ptx() -> String {
    let mut out = String::with_capacity(8 << 10);
    out.push_str("// prlx: recording runtime added at load (prlx-ptx-instrument)\n");
    out.push_str(".visible .global .align 8 .b8 __prlx_desc[64];\n");
    let _ = writeln!(
        out,
        ".visible .global .align 8 .b8 {LAUNCH_TABLE}[{}];",
        LAUNCH_TABLE_ENTRIES * LAUNCH_ENTRY_BYTES
    );
    // What a grid that found no entry records through: nothing.
    out.push_str(".visible .global .align 8 .b8 __prlx_desc_off[64];\n\n");

    // Branch: direction = any active lane takes it; value = the taken mask.
    let _ = write!(
        out,
        ".func {RECORD_BRANCH}(
	.param .b32 __prlx_branch_site,
	.param .b32 __prlx_branch_cond,
	.param .b32 __prlx_branch_slot,
	.param .b64 __prlx_branch_desc
)
{{
{LOCALS}	ld.param.u32 	%r27, [__prlx_branch_slot];
	ld.param.u64 	%rd1, [__prlx_branch_desc];
	ld.param.u32 	%r1, [__prlx_branch_site];
	ld.param.u32 	%r2, [__prlx_branch_cond];
	activemask.b32 	%r3;
	setp.ne.u32 	%p1, %r2, 0;
	vote.sync.ballot.b32 	%r4, %p1, %r3;
	mov.u32 	%r5, %lanemask_lt;
	and.b32 	%r5, %r5, %r3;
	setp.eq.u32 	%p9, %r5, 0;
	setp.ne.u32 	%p3, %r4, 0;
	selp.u32 	%r6, {}, {}, %p3;
	mov.u32 	%r7, %r4;
",
        TAKEN_MASK_FLAG | (1 << 8),
        TAKEN_MASK_FLAG
    );
    emit(&mut out, "$__prlx_branch");
    out.push_str("}\n\n");

    // Leader-valued events: stores, atomics, switches, function entry/exit.
    let _ = write!(
        out,
        ".func {RECORD_VALUE}(
	.param .b32 __prlx_value_site,
	.param .b32 __prlx_value_type,
	.param .b32 __prlx_value_value,
	.param .b32 __prlx_value_slot,
	.param .b64 __prlx_value_desc
)
{{
{LOCALS}	ld.param.u32 	%r27, [__prlx_value_slot];
	ld.param.u64 	%rd1, [__prlx_value_desc];
	ld.param.u32 	%r1, [__prlx_value_site];
	ld.param.u32 	%r6, [__prlx_value_type];
	ld.param.u32 	%r7, [__prlx_value_value];
	activemask.b32 	%r3;
	mov.u32 	%r5, %lanemask_lt;
	and.b32 	%r5, %r5, %r3;
	setp.eq.u32 	%p9, %r5, 0;
"
    );
    emit(&mut out, "$__prlx_value");
    out.push_str("}\n\n");

    // Per-lane compare operands: the leader claims a ring entry and zeroes
    // the inactive lanes' words; the entry index is broadcast; every active
    // lane writes its own lhs and rhs.
    let _ = write!(
        out,
        ".func {RECORD_SNAPSHOT}(
	.param .b32 __prlx_snapshot_site,
	.param .b32 __prlx_snapshot_lhs,
	.param .b32 __prlx_snapshot_rhs,
	.param .b32 __prlx_snapshot_pred,
	.param .b32 __prlx_snapshot_slot,
	.param .b64 __prlx_snapshot_desc
)
{{
{LOCALS}	ld.param.u32 	%r27, [__prlx_snapshot_slot];
	ld.param.u64 	%rd1, [__prlx_snapshot_desc];
	ld.param.u32 	%r1, [__prlx_snapshot_site];
	ld.param.u32 	%r40, [__prlx_snapshot_lhs];
	ld.param.u32 	%r41, [__prlx_snapshot_rhs];
	ld.param.u32 	%r42, [__prlx_snapshot_pred];
	ld.global.u64 	%rd2, [%rd1+16];
	ld.global.u32 	%r10, [%rd1+36];
	setp.eq.u64 	%p1, %rd2, 0;
	setp.eq.or.u32 	%p1, %r10, 0, %p1;
	@%p1 bra 	$__prlx_snapshot_done;
	ld.global.u32 	%r11, [%rd1+28];
	setp.ge.u32 	%p2, %r27, %r11;
	@%p2 bra 	$__prlx_snapshot_done;
	activemask.b32 	%r3;
	mov.u32 	%r43, %laneid;
	neg.s32 	%r44, %r3;
	and.b32 	%r44, %r44, %r3;
	bfind.u32 	%r45, %r44;
	mul.wide.u32 	%rd3, %r10, 288;
	add.s64 	%rd3, %rd3, 16;
	cvt.u64.u32 	%rd4, %r27;
	mul.lo.s64 	%rd4, %rd4, %rd3;
	add.s64 	%rd4, %rd4, %rd2;
	mov.u32 	%r51, 0;
	setp.eq.u32 	%p9, %r43, %r45;
	mov.u32 	%r47, 0;
	@%p9 atom.global.add.u32 	%r47, [%rd4+8], 1;
	rem.u32 	%r46, %r47, %r10;
	mul.wide.u32 	%rd5, %r46, 288;
	add.s64 	%rd5, %rd5, %rd4;
	@%p9 st.global.u32 	[%rd5+16], %r1;
	@%p9 st.global.u32 	[%rd5+20], %r3;
	@%p9 st.global.u32 	[%rd5+24], %r47;
	@%p9 st.global.u32 	[%rd5+28], %r42;
	mov.u32 	%r48, 0;
	mov.u64 	%rd6, %rd5;
$__prlx_snapshot_zero:
	shr.u32 	%r49, %r3, %r48;
	and.b32 	%r49, %r49, 1;
	setp.eq.and.u32 	%p4, %r49, 0, %p9;
	@%p4 st.global.u32 	[%rd6+32], %r51;
	@%p4 st.global.u32 	[%rd6+160], %r51;
	add.s32 	%r48, %r48, 1;
	add.s64 	%rd6, %rd6, 4;
	setp.lt.u32 	%p5, %r48, 32;
	@%p5 bra 	$__prlx_snapshot_zero;
	@%p9 st.global.u32 	[%rd5+288], %r51;
	@%p9 st.global.u32 	[%rd5+292], %r51;
	@%p9 st.global.u32 	[%rd5+296], %r51;
	@%p9 st.global.u32 	[%rd5+300], %r51;
	add.s32 	%r50, %r47, 1;
	rem.u32 	%r50, %r50, %r10;
	@%p9 st.global.u32 	[%rd4], %r50;
	shfl.sync.idx.b32 	%r46, %r46, %r45, 31, %r3;
	mul.wide.u32 	%rd7, %r46, 288;
	add.s64 	%rd7, %rd7, %rd4;
	mul.wide.u32 	%rd8, %r43, 4;
	add.s64 	%rd7, %rd7, %rd8;
	st.global.u32 	[%rd7+32], %r40;
	st.global.u32 	[%rd7+160], %r41;
$__prlx_snapshot_done:
	ret;
}}

"
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_inputs_define_the_runtime_once_and_declare_it_elsewhere() {
        let define = runtime_ptx_for(Runtime::LinkDefine);
        assert!(define.contains(&format!(".visible .func {RECORD_BRANCH}(")));
        assert!(define.contains(".visible .global .align 8 .b8 __prlx_desc[64];"));
        let declare = runtime_ptx_for(Runtime::LinkExtern);
        assert!(declare.contains(".extern .global .align 8 .b8 __prlx_desc[64];"));
        for name in [RECORD_BRANCH, RECORD_VALUE, RECORD_SNAPSHOT] {
            let decl = declare
                .lines()
                .position(|l| l == format!(".extern .func {name}("))
                .unwrap_or_else(|| panic!("{name} not declared:\n{declare}"));
            // The declaration ends its parameter list and has no body.
            let rest: Vec<&str> = declare.lines().skip(decl).collect();
            let end = rest.iter().position(|l| l.ends_with(");")).unwrap();
            assert!(rest[..=end].iter().all(|l| !l.contains('{')));
            assert!(rest[end - 1].contains("_desc"), "{declare}");
        }
        assert!(!declare.contains("ret;"));
    }
}
