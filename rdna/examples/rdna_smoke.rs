//! Quick manual check: `rdna_smoke CODE_OBJECT` runs vadd from /tmp/rdna/k.hip.
fn main() {
    let path = std::env::args().nth(1).unwrap();
    let co = prlx_rdna::CodeObject::parse(&std::fs::read(path).unwrap()).unwrap();
    let k = co.kernel("vadd").unwrap().clone();
    let mut dev = prlx_rdna::Device::new();
    let m = dev.load(co).unwrap();
    let n = 1000usize;
    let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let b: Vec<f32> = (0..n).map(|i| 2.0 * i as f32).collect();
    let bytes = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let pa = dev.alloc(4 * n as u64, 256).unwrap();
    let pb = dev.alloc(4 * n as u64, 256).unwrap();
    let pc = dev.alloc(4 * n as u64, 256).unwrap();
    dev.write(pa, &bytes(&a)).unwrap();
    dev.write(pb, &bytes(&b)).unwrap();
    let mut ka = vec![0u8; k.kernarg_segment_size as usize];
    ka[0..8].copy_from_slice(&pa.to_le_bytes());
    ka[8..16].copy_from_slice(&pb.to_le_bytes());
    ka[16..24].copy_from_slice(&pc.to_le_bytes());
    ka[24..28].copy_from_slice(&(n as u32).to_le_bytes());
    let dims = prlx_rdna::LaunchDims {
        grid: [4, 1, 1],
        block: [256, 1, 1],
        dynamic_lds: 0,
    };
    prlx_rdna::fill_hidden_args(&k, &dims, &mut ka);
    match dev.launch(m, "vadd", dims.grid, dims.block, 0, &ka) {
        Ok(s) => println!("ok {s:?}"),
        Err(f) => println!("fault: {f}"),
    }
    let mut out = vec![0u8; 4 * n];
    dev.read(pc, &mut out).unwrap();
    let c: Vec<f32> = out
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
        .collect();
    let bad = (0..n).filter(|&i| c[i] != a[i] + b[i]).count();
    println!("mismatches: {bad}; c[999]={}", c[999]);
}
