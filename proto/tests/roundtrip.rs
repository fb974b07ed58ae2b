//! Encode/decode round trips of every message, and malformed input that must
//! come back as an error, never a panic.

use prlx_proto::frame::{
    Frame, FrameHeader, FrameKind, HEADER_LEN, MAX_FRAME_PAYLOAD, read_frame, write_frame,
};
use prlx_proto::{DiffOptions, Request, Response, Transfer};
use prlx_session::LaunchRecord;
use proptest::prelude::*;

fn record(kernel: String, index: u32, grid: u32) -> LaunchRecord {
    LaunchRecord {
        kernel,
        launch_index: index,
        grid: [grid.max(1), 1, 1],
        block: [32, 1, 1],
        ..LaunchRecord::default()
    }
}

fn any_request() -> impl Strategy<Value = Request> {
    prop_oneof![
        ("[a-z]{0,12}", any::<u16>())
            .prop_map(|(client, version)| Request::Hello { client, version }),
        (
            "[a-z0-9.-]{1,16}",
            proptest::option::of("[a-z]{1,8}"),
            any::<u32>()
        )
            .prop_map(|(name, baseline, pid)| Request::CreateSession {
                name,
                baseline,
                command: vec!["./app".into()],
                pid
            }),
        (
            "[a-z]{1,8}",
            "[_a-zA-Z0-9]{1,20}",
            any::<u32>(),
            any::<u32>(),
            any::<u64>(),
            any::<u64>()
        )
            .prop_map(|(session, kernel, index, grid, t, s)| Request::PutLaunch {
                session,
                record: Box::new(record(kernel, index, grid)),
                trace_bytes: t,
                site_table_bytes: s,
                site_table_image: Some(t ^ s),
                transfer: if t % 2 == 0 {
                    Transfer::Chunks
                } else {
                    Transfer::Memfd
                },
            }),
        Just(Request::ListSessions),
        Just(Request::Status),
        "[a-z]{1,8}".prop_map(|session| Request::DeleteSession { session }),
        ("[a-z]{1,8}", "[a-z]{1,8}", any::<usize>(), any::<bool>()).prop_map(
            |(a, b, max_edits, compare_values)| Request::Diff {
                a,
                b,
                options: DiffOptions {
                    max_edits,
                    min_resync: 2,
                    compare_values
                },
            }
        ),
        any::<u64>().prop_map(|job| Request::JobStatus { job }),
    ]
}

proptest! {
    #[test]
    fn requests_round_trip_through_frames(request in any_request()) {
        let mut wire = Vec::new();
        write_frame(&mut wire, FrameKind::Message, &request.to_payload()).unwrap();
        let frame = read_frame(&mut &wire[..]).unwrap();
        prop_assert_eq!(frame.kind, FrameKind::Message);
        prop_assert_eq!(Request::from_payload(&frame.payload).unwrap(), request);
    }

    #[test]
    fn chunks_round_trip(payload in proptest::collection::vec(any::<u8>(), 0..4096)) {
        let frame = Frame { kind: FrameKind::Chunk, payload };
        let bytes = frame.to_bytes().unwrap();
        let (back, used) = Frame::from_bytes(&bytes).unwrap();
        prop_assert_eq!(used, bytes.len());
        prop_assert_eq!(back, frame);
    }

    /// Arbitrary bytes parse to a frame or an error; a header that validates
    /// never announces more than the limit.
    #[test]
    fn garbage_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
        if let Ok(raw) = <[u8; HEADER_LEN]>::try_from(bytes.get(..HEADER_LEN).unwrap_or(&[])) {
            if let Ok(header) = FrameHeader::decode(&raw) {
                prop_assert!(header.len <= MAX_FRAME_PAYLOAD);
            }
        }
        let _ = Frame::from_bytes(&bytes);
        let _ = read_frame(&mut &bytes[..]);
        let _ = Request::from_payload(&bytes);
        let _ = Response::from_payload(&bytes);
    }

    /// A valid header with a corrupted magic/version/kind/flags byte is refused.
    #[test]
    fn corrupted_header_bytes_are_refused(at in 0usize..8, value in any::<u8>()) {
        let mut raw = FrameHeader { version: prlx_proto::PROTOCOL_VERSION, kind: FrameKind::Message, len: 3 }.encode();
        prop_assume!(raw[at] != value);
        // Kind 1 and 2 are both valid; the version's high byte 0 and low 1 are checked.
        prop_assume!(!(at == 6 && (value == 1 || value == 2)));
        raw[at] = value;
        prop_assert!(FrameHeader::decode(&raw).is_err());
    }
}

#[test]
fn responses_round_trip() {
    for response in [
        Response::Ok,
        Response::Hello {
            server: "prlxd".into(),
            version: prlx_proto::PROTOCOL_VERSION,
            uid: 1000,
            features: vec![prlx_proto::FEATURE_MEMFD.into()],
        },
        Response::LaunchStored {
            seq: 3,
            stored_bytes: 99,
        },
        Response::error(prlx_proto::ErrorCode::QuotaExceeded, "quota: 3 sessions"),
        Response::DiffReport {
            json: "{}".into(),
            text: "same".into(),
        },
    ] {
        assert_eq!(
            Response::from_payload(&response.to_payload()).unwrap(),
            response
        );
    }
}

#[test]
fn unknown_requests_are_errors_that_name_the_problem() {
    let err = Request::from_payload(br#"{"request":"format_disk"}"#).unwrap_err();
    assert!(err.to_string().contains("format_disk"), "{err}");
}

/// Peers from before memfd transfers: no `transfer`, no `features`.
#[test]
fn messages_without_the_optional_fields_take_the_defaults() {
    let put = Request::PutLaunch {
        session: "s".into(),
        record: Box::new(LaunchRecord::default()),
        trace_bytes: 10,
        site_table_bytes: 0,
        site_table_image: None,
        transfer: Transfer::Memfd,
    };
    let mut json: serde_json::Value = serde_json::from_slice(&put.to_payload()).unwrap();
    json.as_object_mut().unwrap().remove("transfer");
    let old = Request::from_payload(json.to_string().as_bytes()).unwrap();
    assert!(matches!(
        old,
        Request::PutLaunch {
            transfer: Transfer::Chunks,
            ..
        }
    ));
    let hello = br#"{"response": "hello", "server": "prlxd 0.1", "version": 1, "uid": 0}"#;
    assert!(matches!(
        Response::from_payload(hello).unwrap(),
        Response::Hello { features, .. } if features.is_empty()
    ));
}
