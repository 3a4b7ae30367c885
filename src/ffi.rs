//! A small, stable C ABI over the estimators, for hosts that are not Python — first of all ns-3,
//! whose `RttEstimator` subclass (defined at run time through the wheel's cppyy bindings) calls
//! these functions (docs/architecture.md, "ns-3 shim"). Back-off stays with the host's timer, as in ns-3.
//!
//! ```c
//! void *e = rttlab_estimator_new("linux", "rto_min=200ms,hz=1000");   // NULL on error
//! rttlab_estimator_on_sample(e, now_ns, rtt_ns, cwnd_segments);       // cwnd <= 0: unknown
//! rttlab_estimator_on_timer_armed(e, now_ns, cwnd_segments, max_cwnd_segments);
//! uint64_t rto_ns = rttlab_estimator_rto(e);
//! rttlab_estimator_free(e);
//! ```
//! Errors: `rttlab_last_error()` returns the message of the last failed call on this thread.
//!
//! Version 3 adds `rttlab_estimator_seed_stream(e, seed, flow)`: an estimator that draws random
//! numbers (CA-RTO) draws from the stream rttlab's simulator gives flow `flow` of a run seeded
//! `seed`, so a host running several flows seeds each as the simulator does.
//!
//! Version 2 adds the full context of a sample or timer arm, as the simulator passes it
//! ([`crate::rtt::Context`]: cwnd, ssthresh, max_cwnd, new_window, ack_delay), and
//! `rttlab_abi_version()`; version 1's calls are unchanged.
//!
//! ```c
//! typedef struct { uint64_t now_ns; double cwnd, ssthresh, max_cwnd; int32_t new_window; uint64_t ack_delay_ns; } rttlab_context;
//! rttlab_context c = { now_ns, cwnd, ssthresh, max_cwnd, /*new_window*/ -1, ack_delay_ns }; // <= 0 / -1: unknown
//! rttlab_estimator_on_sample_ctx(e, rtt_ns, &c);
//! rttlab_estimator_on_timer_armed_ctx(e, &c);
//! ```

use crate::rtt::{self, Context, Estimator, RttEstimator};
use std::cell::RefCell;
use std::ffi::{c_char, CStr, CString};

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

fn set_error(message: String) {
    let c = CString::new(message.replace('\0', " ")).unwrap_or_default();
    LAST_ERROR.with(|e| *e.borrow_mut() = c);
}

fn parse_params(text: &str) -> Result<Vec<(String, String)>, String> {
    text.split(',')
        .map(str::trim)
        .filter(|kv| !kv.is_empty())
        .map(|kv| {
            kv.split_once('=')
                .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                .ok_or_else(|| format!("parameter '{kv}' is not KEY=VALUE"))
        })
        .collect()
}

/// The ABI's version: 1 = the original calls, 2 = `*_ctx` calls with the full context,
/// 3 = `rttlab_estimator_seed_stream`.
pub const ABI_VERSION: u32 = 3;

/// The C layout of [`Context`]. Windows in segments; a window ≤ 0 or not finite is unknown;
/// `new_window` −1 unknown, 0 no, 1 yes.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RttlabContext {
    pub now_ns: u64,
    pub cwnd: f64,
    pub ssthresh: f64,
    pub max_cwnd: f64,
    pub new_window: i32,
    pub ack_delay_ns: u64,
}

impl RttlabContext {
    fn to_context(self) -> Context {
        let known = |x: f64| (x.is_finite() && x > 0.0).then_some(x);
        Context {
            now: self.now_ns,
            cwnd: known(self.cwnd),
            ssthresh: known(self.ssthresh),
            max_cwnd: known(self.max_cwnd),
            new_window: match self.new_window {
                0 => Some(false),
                1 => Some(true),
                _ => None,
            },
            ack_delay: self.ack_delay_ns,
        }
    }
}

/// The version of this ABI ([`ABI_VERSION`]).
#[no_mangle]
pub extern "C" fn rttlab_abi_version() -> u32 {
    ABI_VERSION
}

/// Feed one sample with the full context (NULL context: only `rtt_ns`, nothing else known).
///
/// # Safety
/// `e` as for `rttlab_estimator_on_sample`; `ctx` NULL or a valid `rttlab_context`.
#[no_mangle]
pub unsafe extern "C" fn rttlab_estimator_on_sample_ctx(
    e: *mut Estimator,
    rtt_ns: u64,
    ctx: *const RttlabContext,
) {
    // SAFETY: per the contract, `e` is a live estimator or NULL and `ctx` valid or NULL.
    if let Some(e) = unsafe { e.as_mut() } {
        let ctx = unsafe { ctx.as_ref() }.map_or_else(Context::default, |c| c.to_context());
        e.on_sample(rtt_ns, &ctx);
    }
}

/// The timer was (re)armed, with the full context.
///
/// # Safety
/// As for `rttlab_estimator_on_sample_ctx`.
#[no_mangle]
pub unsafe extern "C" fn rttlab_estimator_on_timer_armed_ctx(
    e: *mut Estimator,
    ctx: *const RttlabContext,
) {
    // SAFETY: per the contract, `e` is a live estimator or NULL and `ctx` valid or NULL.
    if let Some(e) = unsafe { e.as_mut() } {
        let ctx = unsafe { ctx.as_ref() }.map_or_else(Context::default, |c| c.to_context());
        e.on_timer_armed(&ctx);
    }
}

/// Seed the estimator's random stream (CA-RTO's draws) as rttlab's simulator seeds flow `flow` of
/// a run with seed `seed` (the flow's `RtoPolicy` stream, mixed with the estimator's own `seed`
/// parameter). Returns 1 if the estimator draws random numbers, 0 if it has none (nothing changes).
///
/// # Safety
/// As for `rttlab_estimator_on_sample`.
#[no_mangle]
pub unsafe extern "C" fn rttlab_estimator_seed_stream(
    e: *mut Estimator,
    seed: u64,
    flow: u32,
) -> i32 {
    // SAFETY: per the contract, `e` is a live estimator or NULL.
    match unsafe { e.as_mut() } {
        Some(Estimator::CaRto(ca)) => {
            ca.seed_stream(
                crate::rng::Stream::new(seed, crate::rng::Component::RtoPolicy(flow)).next_u64(),
            );
            1
        }
        _ => 0,
    }
}

/// The cap of the backed-off RTO in ns (0 for NULL): the host's back-off stops there.
///
/// # Safety
/// As for `rttlab_estimator_on_sample`.
#[no_mangle]
pub unsafe extern "C" fn rttlab_estimator_max_rto(e: *const Estimator) -> u64 {
    // SAFETY: per the contract, `e` is a live estimator or NULL.
    unsafe { e.as_ref() }.map_or(0, |e| e.max_rto())
}

fn context(now_ns: u64, cwnd: f64, max_cwnd: f64) -> Context {
    let known = |x: f64| (x.is_finite() && x > 0.0).then_some(x);
    Context {
        now: now_ns,
        cwnd: known(cwnd),
        max_cwnd: known(max_cwnd),
        ..Context::default()
    }
}

/// Create an estimator by registry name with `KEY=VALUE,...` parameters (NULL or "" for defaults).
/// Returns NULL on error (see `rttlab_last_error`). Free with `rttlab_estimator_free`.
///
/// # Safety
/// `name` must be a valid NUL-terminated string; `params` NULL or a valid NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn rttlab_estimator_new(
    name: *const c_char,
    params: *const c_char,
) -> *mut Estimator {
    if name.is_null() {
        set_error("estimator name is NULL".into());
        return std::ptr::null_mut();
    }
    // SAFETY: the caller guarantees NUL-terminated strings (checked non-NULL above).
    let name = unsafe { CStr::from_ptr(name) }.to_string_lossy();
    let params = if params.is_null() {
        String::new()
    } else {
        unsafe { CStr::from_ptr(params) }
            .to_string_lossy()
            .into_owned()
    };
    match parse_params(&params).and_then(|p| rtt::build(&name, &p).map_err(|e| e.to_string())) {
        Ok(e) => Box::into_raw(Box::new(e)),
        Err(message) => {
            set_error(message);
            std::ptr::null_mut()
        }
    }
}

/// # Safety
/// `e` must come from `rttlab_estimator_new` and not be freed; NULL is ignored.
#[no_mangle]
pub unsafe extern "C" fn rttlab_estimator_on_sample(
    e: *mut Estimator,
    now_ns: u64,
    rtt_ns: u64,
    cwnd: f64,
) {
    // SAFETY: per the contract above, `e` is a live estimator or NULL.
    if let Some(e) = unsafe { e.as_mut() } {
        e.on_sample(rtt_ns, &context(now_ns, cwnd, 0.0));
    }
}

/// # Safety
/// As for `rttlab_estimator_on_sample`.
#[no_mangle]
pub unsafe extern "C" fn rttlab_estimator_on_timer_armed(
    e: *mut Estimator,
    now_ns: u64,
    cwnd: f64,
    max_cwnd: f64,
) {
    // SAFETY: per the contract, `e` is a live estimator or NULL.
    if let Some(e) = unsafe { e.as_mut() } {
        e.on_timer_armed(&context(now_ns, cwnd, max_cwnd));
    }
}

/// # Safety
/// As for `rttlab_estimator_on_sample`.
#[no_mangle]
pub unsafe extern "C" fn rttlab_estimator_on_timeout(e: *mut Estimator) {
    // SAFETY: per the contract, `e` is a live estimator or NULL.
    if let Some(e) = unsafe { e.as_mut() } {
        e.on_timeout();
    }
}

/// The base RTO in ns (0 for NULL).
///
/// # Safety
/// As for `rttlab_estimator_on_sample`.
#[no_mangle]
pub unsafe extern "C" fn rttlab_estimator_rto(e: *const Estimator) -> u64 {
    // SAFETY: per the contract, `e` is a live estimator or NULL.
    unsafe { e.as_ref() }.map_or(0, |e| e.rto())
}

/// The predicted RTT in ns, or 0 while the estimator has none.
///
/// # Safety
/// As for `rttlab_estimator_on_sample`.
#[no_mangle]
pub unsafe extern "C" fn rttlab_estimator_prediction(e: *const Estimator) -> u64 {
    // SAFETY: per the contract, `e` is a live estimator or NULL.
    unsafe { e.as_ref() }
        .and_then(|e| e.prediction())
        .unwrap_or(0)
}

/// # Safety
/// `e` must come from `rttlab_estimator_new` and not be used afterwards; NULL is ignored.
#[no_mangle]
pub unsafe extern "C" fn rttlab_estimator_free(e: *mut Estimator) {
    if !e.is_null() {
        // SAFETY: `e` was made by Box::into_raw in rttlab_estimator_new and is freed once.
        drop(unsafe { Box::from_raw(e) });
    }
}

/// The message of the last failed call on this thread ("" if none). Valid until the next call.
#[no_mangle]
pub extern "C" fn rttlab_last_error() -> *const c_char {
    LAST_ERROR.with(|e| e.borrow().as_ptr())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::MS;

    #[test]
    fn the_c_abi_drives_an_estimator_like_the_rust_api() {
        unsafe {
            let e = rttlab_estimator_new(
                c"linux".as_ptr(),
                c"rto_min=5ms, window=every-sample".as_ptr(),
            );
            assert!(!e.is_null());
            assert_eq!(rttlab_estimator_prediction(e), 0);
            rttlab_estimator_on_sample(e, 0, 100 * MS, 10.0);
            assert_eq!(rttlab_estimator_prediction(e), 100 * MS);
            assert_eq!(rttlab_estimator_rto(e), 300 * MS);
            rttlab_estimator_on_timeout(e);
            rttlab_estimator_free(e);
        }
    }

    #[test]
    fn errors_are_reported_through_last_error() {
        unsafe {
            let e = rttlab_estimator_new(c"linux".as_ptr(), c"rto_min".as_ptr());
            assert!(e.is_null());
            assert_eq!(
                CStr::from_ptr(rttlab_last_error()).to_str().unwrap(),
                "parameter 'rto_min' is not KEY=VALUE"
            );
            let e = rttlab_estimator_new(c"bbr".as_ptr(), std::ptr::null());
            assert!(e.is_null());
            assert!(CStr::from_ptr(rttlab_last_error())
                .to_str()
                .unwrap()
                .starts_with("unknown estimator 'bbr'"));
            assert!(rttlab_estimator_new(std::ptr::null(), std::ptr::null()).is_null());
            assert_eq!(rttlab_estimator_rto(std::ptr::null()), 0);
        }
    }

    #[test]
    fn the_abi_reports_version_three() {
        assert_eq!(rttlab_abi_version(), 3);
    }

    #[test]
    fn seeding_gives_ca_rto_the_simulators_stream_of_that_flow_and_other_estimators_nothing() {
        let contended = RttlabContext {
            now_ns: 0,
            cwnd: 2.0,
            ssthresh: 8.0,
            max_cwnd: 40.0,
            new_window: -1,
            ack_delay_ns: 0,
        };
        let draws = |seed: u64, flow: u32| unsafe {
            let e = rttlab_estimator_new(c"ca-rto".as_ptr(), std::ptr::null());
            assert_eq!(rttlab_estimator_seed_stream(e, seed, flow), 1);
            rttlab_estimator_on_sample_ctx(e, 100 * MS, &contended);
            let rtos = (0..20)
                .map(|_| {
                    rttlab_estimator_on_timer_armed_ctx(e, &contended);
                    rttlab_estimator_rto(e)
                })
                .collect::<Vec<_>>();
            rttlab_estimator_free(e);
            rtos
        };
        assert_eq!(draws(7, 0), draws(7, 0));
        assert_ne!(draws(7, 0), draws(7, 1));
        assert_ne!(draws(7, 0), draws(8, 0));
        // The simulator's flow 3 of seed 7: the same stream through Rust.
        let mut ca = crate::rtt::ca_rto::CaRto::new(crate::rtt::ca_rto::Config::default());
        ca.seed_stream(crate::rng::Stream::new(7, crate::rng::Component::RtoPolicy(3)).next_u64());
        ca.on_sample(100 * MS, &contended.to_context());
        let rust = (0..20)
            .map(|_| {
                ca.on_timer_armed(&contended.to_context());
                ca.rto()
            })
            .collect::<Vec<_>>();
        assert_eq!(draws(7, 3), rust);
        unsafe {
            let e = rttlab_estimator_new(c"rfc6298".as_ptr(), std::ptr::null());
            assert_eq!(rttlab_estimator_seed_stream(e, 7, 0), 0);
            rttlab_estimator_free(e);
        }
    }

    #[test]
    fn the_full_context_reaches_the_estimator_as_the_simulator_passes_it() {
        // Linux's estimator decays rttvar only when new_window says an RTT window ended: the
        // same samples through the ABI and through Rust, with new_window false then true.
        let ctx = |now, w: i32| RttlabContext {
            now_ns: now,
            cwnd: 10.0,
            ssthresh: 8.0,
            max_cwnd: 20.0,
            new_window: w,
            ack_delay_ns: 0,
        };
        let mut rust = rtt::build("linux", &[]).unwrap();
        unsafe {
            let e = rttlab_estimator_new(c"linux".as_ptr(), std::ptr::null());
            for (i, (ms, w)) in [(100, 0), (300, 0), (125, 0), (125, 1), (125, 1)]
                .into_iter()
                .enumerate()
            {
                let c = ctx(i as u64 * 100 * MS, w);
                rttlab_estimator_on_sample_ctx(e, ms * MS, &c);
                rust.on_sample(ms * MS, &c.to_context());
                assert_eq!(rttlab_estimator_rto(e), rust.rto(), "sample {i}");
            }
            assert_eq!(
                rttlab_estimator_rto(e),
                125 * MS + 313 * MS,
                "rttvar decayed to 312.5 ms at the window ends"
            );
            assert_eq!(rttlab_estimator_max_rto(e), 120_000 * MS);
            rttlab_estimator_on_sample_ctx(e, 100 * MS, std::ptr::null());
            rttlab_estimator_free(e);
        }
        let c = ctx(0, -1).to_context();
        assert_eq!(
            (c.cwnd, c.ssthresh, c.max_cwnd, c.new_window),
            (Some(10.0), Some(8.0), Some(20.0), None)
        );
    }

    #[test]
    fn ca_rto_gets_its_contention_through_the_abi() {
        unsafe {
            let e = rttlab_estimator_new(c"ca-rto".as_ptr(), c"min_rto=0".as_ptr());
            rttlab_estimator_on_sample(e, 0, 100 * MS, 2.0);
            let base = rttlab_estimator_rto(e);
            let mut extended = false;
            for _ in 0..20 {
                rttlab_estimator_on_timer_armed(e, 0, 2.0, 50.0);
                extended |= rttlab_estimator_rto(e) > base;
            }
            assert!(extended, "a contended window must extend the RTO");
            rttlab_estimator_free(e);
        }
    }
}
