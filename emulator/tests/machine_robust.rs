//! Bad input never panics: mutated PTX either fails to load with a
//! diagnostic or runs to a result, a fault or the watchdog.

mod machine_util;
use machine_util::*;
use prlx_emulator::LaunchError;

const KERNEL: &str = r#".version 7.5
.target sm_80
.address_size 64
.func (.param .b32 ret) twice(.param .b32 x)
{
.reg .b32 %r<3>;
ld.param.b32 %r1, [x];
shl.b32 %r2, %r1, 1;
st.param.b32 [ret], %r2;
ret;
}
.visible .entry k(.param .u64 out, .param .u32 n)
{
.reg .pred %p<3>;
.reg .b32 %r<12>;
.reg .b64 %rd<6>;
.shared .align 4 .b8 buf[128];
.local .align 4 .b8 loc[16];
ld.param.u64 %rd1, [out];
ld.param.u32 %r1, [n];
mov.u32 %r2, %tid.x;
mov.u32 %r3, 0;
$loop:
add.s32 %r3, %r3, %r2;
add.s32 %r1, %r1, -1;
setp.gt.s32 %p1, %r1, 0;
@%p1 bra $loop;
shl.b32 %r4, %r2, 2;
mov.u32 %r5, buf;
add.s32 %r6, %r5, %r4;
st.shared.u32 [%r6], %r3;
bar.sync 0;
ld.shared.u32 %r7, [%r6];
shfl.sync.bfly.b32 %r8, %r7, 1, 31, -1;
st.local.u32 [loc+4], %r8;
ld.local.u32 %r9, [loc+4];
{
.param .b32 p0;
st.param.b32 [p0], %r9;
.param .b32 r0;
call.uni (r0), twice, (p0);
ld.param.b32 %r10, [r0];
}
mul.wide.u32 %rd2, %r2, 4;
add.s64 %rd3, %rd1, %rd2;
st.global.u32 [%rd3], %r10;
ret;
}
"#;

#[test]
fn watchdog_stops_a_kernel_that_never_ends() {
    let ptx = ".version 7.5\n.target sm_80\n.address_size 64\n.visible .entry spin()\n{\n$l:\nbra $l;\n}\n";
    let mut dev = device();
    dev.set_watchdog(Some(10_000));
    let f = kernel(&mut dev, ptx, "spin");
    let err = run_err(&mut dev, f, cfg(1, 32), &Params::new());
    let LaunchError::Timeout(msg) = &err else {
        panic!("{err}")
    };
    assert!(
        msg.contains("kernel spin exceeded 10000 warp-instructions"),
        "{msg}"
    );
}

#[test]
fn the_unmutated_kernel_runs() {
    let mut dev = device();
    let f = kernel(&mut dev, KERNEL, "k");
    let out = dev.mem_alloc(32 * 4).unwrap();
    run(&mut dev, f, cfg(1, 32), &Params::new().u64(out).u32(3));
    let got = download_u32(&dev, out, 32);
    for (t, g) in got.iter().enumerate() {
        assert_eq!(*g, 2 * 3 * (t as u32 ^ 1), "thread {t}");
    }
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn mutate(rng: &mut Rng) -> String {
    let mut lines: Vec<String> = KERNEL.lines().map(str::to_string).collect();
    for _ in 0..1 + rng.below(3) {
        let i = rng.below(lines.len());
        match rng.below(7) {
            0 => {
                lines.remove(i);
            }
            1 => {
                let l = lines[i].clone();
                lines.insert(rng.below(lines.len()), l);
            }
            2 => {
                let j = rng.below(lines.len());
                lines.swap(i, j);
            }
            3 => {
                let regs = [
                    "%r1", "%r3", "%r6", "%rd1", "%rd3", "%p1", "%r11", "%tid.x", "buf", "loc",
                    "0", "-7", "4096",
                ];
                let from = regs[rng.below(regs.len())];
                let to = regs[rng.below(regs.len())];
                lines[i] = lines[i].replacen(from, to, 1);
            }
            4 => {
                let ops = [
                    ".u32", ".s64", ".f32", ".b16", ".v2", ".shared", ".global", ".local", ".param",
                ];
                let from = ops[rng.below(ops.len())];
                let to = ops[rng.below(ops.len())];
                lines[i] = lines[i].replacen(from, to, 1);
            }
            5 => {
                let mut b = lines[i].clone().into_bytes();
                if !b.is_empty() {
                    let k = rng.below(b.len());
                    let alphabet = b"{}[];,.%$+-0123456789abcdefxyz_ ";
                    b[k] = alphabet[rng.below(alphabet.len())];
                }
                lines[i] = String::from_utf8_lossy(&b).into_owned();
            }
            _ => {
                let k = rng.below(lines[i].len() + 1);
                lines[i].truncate(k);
            }
        }
    }
    lines.join("\n")
}

#[test]
fn mutated_ptx_never_panics() {
    let (mut loaded, mut ran) = (0, 0);
    for i in 0..2000u64 {
        let mut rng = Rng(0x5eed ^ (i << 20));
        let ptx = mutate(&mut rng);
        let mut dev = device();
        dev.set_watchdog(Some(50_000));
        let Ok(m) = dev.load_module(&ptx, "mutant.ptx") else {
            continue;
        };
        loaded += 1;
        let Ok(f) = dev.get_function(m, "k") else {
            continue;
        };
        let out = dev.mem_alloc(64 * 4).unwrap();
        let info = dev.kernel_info(f).unwrap().clone();
        let mut params = Params::new().u64(out).u32(3).0;
        params.resize(info.param_bytes.max(12) as usize, 0);
        if dev.launch(f, &cfg(2, 32), &params).is_ok() {
            ran += 1;
        }
    }
    // The mutations must exercise both paths, not only the parser's errors.
    assert!(loaded > 40, "only {loaded} mutants loaded");
    assert!(ran > 20, "only {ran} mutants ran");
}
