//! prlx-compile against the real toolchain: instrumented PTX carries the
//! descriptor and the site table, ptxas accepts it, and two compiles agree.

use prlx_compile::{CompileError, CompileRequest, compile};
use std::path::{Path, PathBuf};

use prlx_tests::repo_root;

/// `false` (skip, or fail under PRLX_REQUIRE_TOOLCHAIN=1) without clang-19.
fn have_clang() -> bool {
    let found = prlx_tests::find_tool("clang-19").is_some();
    if !found {
        prlx_tests::missing("clang-19");
    }
    found
}

fn kernel() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kernels/branchy.cu")
}

fn ptxas() -> Option<PathBuf> {
    let path = repo_root().join(".tools/cuda13/nvidia/cu13/bin/ptxas");
    path.is_file().then_some(path)
}

fn site_ids(sites: &Path) -> Vec<(u64, String, u64)> {
    let text = std::fs::read_to_string(sites).unwrap();
    let table: serde_json::Value = serde_json::from_str(&text).unwrap();
    table
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["site_id"].as_u64().unwrap(),
                s["kind"].as_str().unwrap().to_owned(),
                s["line"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn instrumented_ptx_defines_the_descriptor_and_the_sites() {
    if !have_clang() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out/branchy.ptx");
    let mut req = CompileRequest::parse(&[
        kernel().to_str().unwrap(),
        "-gline-tables-only",
        "--snapshots",
        "-o",
        out.to_str().unwrap(),
    ])
    .unwrap();
    if ptxas().is_some() {
        req.cubin = Some(out.with_extension("cubin"));
    }
    let result = compile(&req).unwrap();
    let ptx = std::fs::read_to_string(&result.ptx).unwrap();
    assert!(
        ptx.contains(".visible .global .align 8 .b8 __prlx_desc[64];"),
        "{ptx}"
    );
    assert!(
        ptx.contains(".visible .global .align 1 .b8 __prlx_sites["),
        "{ptx}"
    );
    assert!(ptx.contains(".target sm_80"), "{ptx}");
    assert!(
        !ptx.contains(".func") && !ptx.contains("\tcall"),
        "the runtime is inlined and no copy is left: {ptx}"
    );

    let sites = result.sites.expect("instrumented: a site table");
    assert_eq!(sites, dir.path().join("out/prlx-sites.json"));
    let ids = site_ids(&sites);
    let kinds: Vec<&str> = ids.iter().map(|(_, k, _)| k.as_str()).collect();
    for kind in ["Branch", "Switch", "Atomic", "SharedMemStore"] {
        assert!(kinds.contains(&kind), "{kind} missing from {ids:?}");
    }
    assert!(
        ids.iter()
            .any(|(_, kind, line)| kind == "Branch" && *line == 12),
        "the data-dependent branch at branchy.cu:12: {ids:?}"
    );
    match (&result.cubin, ptxas()) {
        (Some(cubin), Some(_)) => assert!(std::fs::metadata(cubin).unwrap().len() > 0),
        (None, None) => eprintln!("ptxas not found: cubin not checked"),
        other => panic!("unexpected cubin result {other:?}"),
    }
}

#[test]
fn two_compiles_give_the_same_site_ids_and_ptx() {
    if !have_clang() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let build = |sub: &str, extra: &[&str]| {
        let out = dir.path().join(sub).join("k.ptx");
        let mut args = vec![kernel().to_str().unwrap().to_owned(), "-g".to_owned()];
        args.extend(extra.iter().map(|s| s.to_string()));
        args.extend(["-o".to_owned(), out.to_str().unwrap().to_owned()]);
        let result = compile(&CompileRequest::parse(&args).unwrap()).unwrap();
        (
            site_ids(&result.sites.unwrap()),
            std::fs::read_to_string(result.ptx).unwrap(),
        )
    };
    let (ids_a, ptx_a) = build("a", &[]);
    let (ids_b, ptx_b) = build("b", &[]);
    let (ids_c, _) = build("c", &["-DUNRELATED=1"]);
    assert!(!ids_a.is_empty());
    assert_eq!(ids_a, ids_b);
    assert_eq!(ids_a, ids_c, "an unrelated define does not move ids");
    assert_eq!(ptx_a, ptx_b, "the compile is deterministic");
}

#[test]
fn kernels_compiled_into_one_directory_share_a_merged_site_map() {
    if !have_clang() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let other = dir.path().join("other.cu");
    std::fs::write(
        &other,
        "extern \"C\" __attribute__((global)) void other(int *p, int n) {\n\
           if (p[0] > n) p[1] = __nvvm_atom_add_gen_i(p + 2, 1);\n\
         }\n",
    )
    .unwrap();
    for source in [kernel(), other] {
        let stem = source.file_stem().unwrap().to_str().unwrap().to_owned();
        let out = dir.path().join(format!("{stem}.ptx"));
        compile(&CompileRequest::new(&source, &out)).unwrap();
    }
    let text = std::fs::read_to_string(dir.path().join("prlx-sites.json")).unwrap();
    let table: serde_json::Value = serde_json::from_str(&text).unwrap();
    let functions: std::collections::BTreeSet<&str> = table
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["function"].as_str().unwrap())
        .collect();
    assert_eq!(functions, ["branchy", "other"].into_iter().collect());
}

#[test]
fn no_instrument_is_the_plain_pipeline() {
    if !have_clang() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("plain.ptx");
    let req = CompileRequest::parse(&[
        kernel().to_str().unwrap(),
        "--no-instrument",
        "-o",
        out.to_str().unwrap(),
    ])
    .unwrap();
    let result = compile(&req).unwrap();
    assert_eq!(result.sites, None);
    assert!(!dir.path().join("prlx-sites.json").exists());
    let ptx = std::fs::read_to_string(&out).unwrap();
    assert!(ptx.contains(".entry branchy"), "{ptx}");
    assert!(!ptx.contains("__prlx"), "{ptx}");
}

#[test]
fn filter_leaves_other_kernels_alone() {
    if !have_clang() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("f.ptx");
    let req = CompileRequest::parse(&[
        kernel().to_str().unwrap(),
        "--filter",
        "not_branchy*",
        "-o",
        out.to_str().unwrap(),
    ])
    .unwrap();
    compile(&req).unwrap();
    let ptx = std::fs::read_to_string(&out).unwrap();
    assert!(ptx.contains(".entry branchy"), "{ptx}");
    assert!(
        !ptx.contains("__prlx_desc"),
        "nothing instrumented, no runtime linked"
    );
    assert!(site_ids(&dir.path().join("prlx-sites.json")).is_empty());
}

#[test]
fn a_compile_error_is_one_line_naming_clang() {
    if !have_clang() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.cu");
    std::fs::write(&bad, "__attribute__((global)) void k() { int x = ; }\n").unwrap();
    let req = CompileRequest::new(&bad, dir.path().join("bad.ptx"));
    let err = compile(&req).unwrap_err();
    assert!(matches!(err, CompileError::ToolFailed { .. }), "{err:?}");
    let line = err.to_string();
    assert!(
        line.starts_with("clang-19 failed (exit 1): ")
            && line.contains("bad.cu:1:")
            && line.contains("error: expected expression"),
        "{line}"
    );
    assert!(!line.contains('\n'));
}

#[test]
fn cuda_path_compiles_ordinary_cuda_sources() {
    if !have_clang() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let Some(sdk) = prlx_tests::cuda12_sdk(dir.path()) else {
        prlx_tests::missing(prlx_tests::CUDA12_SDK_MISSING);
        return;
    };
    let source = dir.path().join("saxpy.cu");
    std::fs::write(
        &source,
        "#include <cuda_runtime.h>\n\
         __global__ void saxpy(float a, const float *x, float *y, int n) {\n\
           int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
           if (i < n) y[i] = a * x[i] + sqrtf(y[i]);\n\
         }\n",
    )
    .unwrap();
    let out = dir.path().join("saxpy.cubin");
    let req = CompileRequest::parse(&[
        "--cuda-path",
        sdk.to_str().unwrap(),
        "-g",
        source.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ])
    .unwrap();
    let result = compile(&req).unwrap();
    let ptx = std::fs::read_to_string(&result.ptx).unwrap();
    assert!(ptx.contains(".entry _Z5saxpyfPKfPfi"), "{ptx}");
    assert!(ptx.contains("__prlx_desc"));
    assert!(out.is_file(), "the SDK's ptxas made the cubin");
    let ids = site_ids(&result.sites.unwrap());
    assert!(
        ids.iter()
            .any(|(_, kind, line)| kind == "Branch" && *line == 4),
        "{ids:?}"
    );
}
