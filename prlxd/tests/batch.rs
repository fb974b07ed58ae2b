//! `PutRecords`: a real prlxd takes many metadata-only launches per round
//! trip, in order with launches sent one by one, within its limits.

mod common;

use common::{Daemon, create, record, trace, wait_for};
use prlx_session::{Manifest, StackFrame};
use std::time::Duration;

#[test]
fn batches_larger_than_a_frame_are_stored_in_order_with_single_launches() {
    let daemon = Daemon::start("max_launches_per_session = 30000");
    let mut client = daemon.client();
    assert!(client.uses_batch(), "the daemon offers batches");
    let session = create(&mut client, "batched", None);
    // Records with stacks: 12,000 of them are several frames' worth.
    let batch = |from: u32, n: u32| -> Vec<_> {
        (from..from + n)
            .map(|i| {
                let mut r = record("k", i);
                r.cpu_stack = vec![
                    StackFrame {
                        ip: format!("{:#x}", 0x40_0000 + i),
                        module: Some("/opt/app/bin/train".repeat(4)),
                        build_id: Some("ab".repeat(20)),
                        offset: Some(u64::from(i)),
                        ..StackFrame::default()
                    };
                    4
                ];
                r
            })
            .collect()
    };
    let first = client
        .put_records(&session, &batch(0, 12_000), 3, 2)
        .unwrap();
    assert_eq!(
        (first.first_seq, first.stored, first.refused),
        (0, 12_000, 0)
    );
    let (seq, _) = client
        .put_launch(&session, &record("traced", 0), &trace("traced", 1), None)
        .unwrap();
    assert_eq!(seq, 12_000);
    let second = client
        .put_records(&session, &batch(12_000, 100), 0, 0)
        .unwrap();
    assert_eq!((second.first_seq, second.stored), (12_001, 100));

    let dir = daemon.session_dir(client.uid, &session);
    wait_for("the manifest", Duration::from_secs(10), || {
        Manifest::load(&dir).is_ok_and(|m| m.launches.len() == 12_101)
    });
    let manifest = Manifest::load(&dir).unwrap();
    for (i, launch) in manifest.launches.iter().enumerate() {
        assert_eq!(launch.seq, i as u64);
    }
    assert_eq!(manifest.launches[12_000].kernel, "traced");
    assert!(manifest.launches[12_000].file.is_some());
    assert_eq!(manifest.launches[12_001].launch_index, 12_000);
    assert_eq!(manifest.launches[11_999].cpu_stack.len(), 4);
    assert_eq!(manifest.dropped_launches, 5);
    assert_eq!(manifest.dropped_backlog, 2);
}

#[test]
fn a_batch_past_the_session_limit_is_stored_up_to_it_and_the_rest_counted() {
    let daemon = Daemon::start("max_launches_per_session = 10");
    let mut client = daemon.client();
    let session = create(&mut client, "limited", None);
    let records: Vec<_> = (0..25).map(|i| record("k", i)).collect();
    let stored = client.put_records(&session, &records, 0, 0).unwrap();
    assert_eq!((stored.stored, stored.refused), (10, 15));
    assert!(
        stored
            .message
            .as_deref()
            .is_some_and(|m| m.contains("max_launches_per_session")),
        "{stored:?}"
    );
    let dir = daemon.session_dir(client.uid, &session);
    wait_for("the manifest", Duration::from_secs(10), || {
        Manifest::load(&dir).is_ok_and(|m| m.dropped_launches == 15)
    });
    assert_eq!(Manifest::load(&dir).unwrap().launches.len(), 10);
}
