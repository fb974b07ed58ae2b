//! Marks: named points and ranges the application puts between its launches
//! (`prlx.mark("step 3")`, `with prlx.session("warmup"):` in Python, which
//! call [`prlx_mark`] through ctypes when the shim is loaded).
//!
//! Marks are kept in memory and written as `session.json`'s `"marks"` array
//! each time the manifest is stored: `{"name", "kind", "time_ns",
//! "first_seq"}`, where `kind` is `point`, `begin` or `end` and `first_seq`
//! is the `seq` of the first launch recorded after the mark (the number of
//! launches whose `timestamp_ns` is earlier). A range is the launches from a
//! `begin`'s `first_seq` up to its `end`'s. Readers that do not know the
//! field ignore it; sessions stored in prlxd carry no marks.

use std::ffi::{CStr, c_char, c_int};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Mutex;

use prlx_session::LaunchRecord;

struct Mark {
    name: String,
    kind: &'static str,
    time_ns: u64,
}

static MARKS: Mutex<Vec<Mark>> = Mutex::new(Vec::new());

/// Longest mark name kept (longer ones are cut at a character boundary).
const MAX_NAME: usize = 256;

/// Records a mark now. `kind`: 0 point, 1 begin of a range, 2 end of one.
/// Returns 0, or -1 for a null or non-UTF-8 name or an unknown kind.
///
/// # Safety
/// `name` is null or a NUL-terminated string valid for the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prlx_mark(name: *const c_char, kind: c_int) -> c_int {
    let body = || {
        if name.is_null() {
            return -1;
        }
        // SAFETY: the caller passes a NUL-terminated string valid for the call.
        let Ok(text) = unsafe { CStr::from_ptr(name) }.to_str() else {
            return -1;
        };
        let kind = match kind {
            0 => "point",
            1 => "begin",
            2 => "end",
            _ => return -1,
        };
        let mut cut = text.len().min(MAX_NAME);
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        let mark = Mark {
            name: text[..cut].to_owned(),
            kind,
            time_ns: now_ns(),
        };
        MARKS.lock().unwrap_or_else(|p| p.into_inner()).push(mark);
        0
    };
    catch_unwind(AssertUnwindSafe(body)).unwrap_or(-1)
}

fn now_ns() -> u64 {
    // The clock of the launch records' `timestamp_ns`.
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

/// The manifest's JSON with the marks added (unchanged when there are none
/// or it does not parse as an object).
pub fn annotate(json: Vec<u8>, launches: &[LaunchRecord]) -> Vec<u8> {
    let marks = MARKS.lock().unwrap_or_else(|p| p.into_inner());
    if marks.is_empty() {
        return json;
    }
    let Ok(serde_json::Value::Object(mut object)) =
        serde_json::from_slice::<serde_json::Value>(&json)
    else {
        return json;
    };
    let list: Vec<serde_json::Value> = marks
        .iter()
        .map(|m| {
            let first_seq = launches
                .iter()
                .filter(|l| l.timestamp_ns < m.time_ns)
                .map(|l| l.seq + 1)
                .max()
                .unwrap_or(0);
            serde_json::json!({
                "name": m.name,
                "kind": m.kind,
                "time_ns": m.time_ns,
                "first_seq": first_seq,
            })
        })
        .collect();
    object.insert("marks".into(), serde_json::Value::Array(list));
    match serde_json::to_vec_pretty(&serde_json::Value::Object(object)) {
        Ok(mut out) => {
            out.push(b'\n');
            out
        }
        Err(_) => json,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_land_in_the_manifest_with_the_next_launch_seq() {
        let launch = |seq: u64, t: u64| LaunchRecord {
            seq,
            timestamp_ns: t,
            ..LaunchRecord::default()
        };
        let before = annotate(b"{\"launches\":[]}".to_vec(), &[]);
        let name = c"step 3";
        // SAFETY: a literal C string.
        assert_eq!(unsafe { prlx_mark(name.as_ptr(), 1) }, 0);
        // SAFETY: null is refused before it is read.
        assert_eq!(unsafe { prlx_mark(std::ptr::null(), 0) }, -1);
        // SAFETY: a literal C string; kind 7 is refused.
        assert_eq!(unsafe { prlx_mark(name.as_ptr(), 7) }, -1);
        let t = MARKS.lock().unwrap()[0].time_ns;
        let out = annotate(
            b"{\"launches\":[]}".to_vec(),
            &[launch(0, t - 10), launch(1, t - 5), launch(2, t + 5)],
        );
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["marks"][0]["name"], "step 3");
        assert_eq!(v["marks"][0]["kind"], "begin");
        assert_eq!(v["marks"][0]["first_seq"], 2);
        assert_eq!(before, b"{\"launches\":[]}");
    }
}
