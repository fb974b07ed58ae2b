//! `ScalarType`'s width and class queries, which the emulator relies on.

use prlx_ptx::ast::ScalarType::{self, *};

/// Every variant once; `the_list_is_complete` checks it.
const ALL: [ScalarType; 28] = [
    B8, B16, B32, B64, B128, U8, U16, U32, U64, S8, S16, S32, S64, F16, F16x2, BF16, BF16x2, TF32,
    F32, F64, E4M3, E5M2, E4M3x2, E5M2x2, Pred, TexRef, SamplerRef, SurfRef,
];

#[test]
fn the_list_is_complete() {
    for (i, t) in ALL.iter().enumerate() {
        // Fails to compile when a variant is added: add it to `ALL` too.
        match t {
            B8 | B16 | B32 | B64 | B128 | U8 | U16 | U32 | U64 | S8 | S16 | S32 | S64 | F16
            | F16x2 | BF16 | BF16x2 | TF32 | F32 | F64 | E4M3 | E5M2 | E4M3x2 | E5M2x2 | Pred
            | TexRef | SamplerRef | SurfRef => {}
        }
        assert!(!ALL[..i].contains(t), "{t} listed twice");
    }
}

#[test]
fn bits_agree_with_storage_size() {
    for t in ALL {
        match t.size_bytes() {
            Some(bytes) => assert_eq!(t.bits(), bytes * 8, "{t}"),
            None => assert!(matches!(t, Pred | TexRef | SamplerRef | SurfRef), "{t}"),
        }
    }
    assert_eq!(Pred.bits(), 1);
    assert_eq!(TexRef.bits(), 64);
}

#[test]
fn spelling_round_trips() {
    for t in ALL {
        assert_eq!(ScalarType::from_directive(t.as_str()), Some(t));
    }
}

#[test]
fn classes_do_not_overlap() {
    for t in ALL {
        let classes = [t.is_int(), t.is_bits(), t.is_float(), t == Pred];
        assert!(classes.iter().filter(|c| **c).count() <= 1, "{t}");
        assert!(!(t.is_signed_int() && t.is_unsigned_int()), "{t}");
    }
    assert!(TF32.is_float() && E4M3x2.is_float());
    assert!(!TexRef.is_float() && !TexRef.is_int() && !TexRef.is_bits());
}

#[test]
fn packed_types_hold_two_elements() {
    for t in ALL {
        if t.is_packed() {
            assert_ne!(t.element(), t, "{t}");
            assert_eq!(t.element().bits() * 2, t.bits(), "{t}");
            assert!(t.element().is_float() && !t.element().is_packed(), "{t}");
        } else {
            assert_eq!(t.element(), t, "{t}");
        }
    }
}

#[test]
fn mask_and_extend() {
    assert_eq!(U8.mask(), 0xff);
    assert_eq!(Pred.mask(), 1);
    assert_eq!(B64.mask(), u64::MAX);
    assert_eq!(B128.mask(), u64::MAX);
    assert_eq!(S8.extend(0x180), 0xffff_ffff_ffff_ff80);
    assert_eq!(S8.extend(0x17f), 0x7f);
    assert_eq!(U8.extend(0x180), 0x80);
    assert_eq!(B16.extend(0x1_8000), 0x8000);
    assert_eq!(S32.extend(0x8000_0000), 0xffff_ffff_8000_0000);
    assert_eq!(S64.extend(0x8000_0000_0000_0000), 0x8000_0000_0000_0000);
    assert_eq!(F16.extend(0xdead_8000), 0x8000);
}
