//! A fixed pool of host threads mapping a list in order: item i's result is at index i
//! whatever thread ran it and whenever it finished, so what callers decide from the
//! results never depends on thread scheduling. Used by the runs that try many worlds
//! (shrink probes, verify cases, the benchmarks' branches); `wio explore` keeps its own
//! pool, with progress and Ctrl-C.

use crate::error::{Result, WioError};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

/// The threads [`map_in_order`] runs for `items` items on `jobs`: at least 1, at most one
/// per item (so callers can report what really ran).
pub fn threads(jobs: usize, items: usize) -> usize {
    jobs.clamp(1, items.max(1))
}

/// `f` of every item of `items` on [`threads`]`(jobs, items.len())` threads, in
/// item order. After a failure no thread takes a new item; the error of the lowest item
/// that failed is returned (every lower item had been taken, so it is the same error a
/// one-thread run would return).
pub fn map_in_order<T: Sync, R: Send>(
    items: &[T],
    jobs: usize,
    f: impl Fn(&T) -> Result<R> + Sync,
) -> Result<Vec<R>> {
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let results: Mutex<Vec<Option<Result<R>>>> =
        Mutex::new((0..items.len()).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..threads(jobs, items.len()) {
            scope.spawn(|| loop {
                if stop.load(Ordering::Relaxed) {
                    return;
                }
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(item) = items.get(i) else { return };
                let r = f(item);
                if r.is_err() {
                    stop.store(true, Ordering::Relaxed);
                }
                if let Ok(mut all) = results.lock() {
                    all[i] = Some(r);
                }
            });
        }
    });
    let mut out = Vec::with_capacity(items.len());
    for r in results.into_inner().map_err(|_| WioError::NoResult {
        what: "a pool thread (it panicked)",
    })? {
        match r {
            Some(r) => out.push(r?),
            // Not taken: only after an earlier item failed (returned above).
            None => {
                return Err(WioError::NoResult {
                    what: "a pool item",
                })
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_in_item_order_and_the_first_error_wins() {
        let items: Vec<u64> = (0..50).collect();
        for jobs in [1, 2, 7] {
            let got = map_in_order(&items, jobs, |x| Ok(x * x)).unwrap();
            assert_eq!(got, items.iter().map(|x| x * x).collect::<Vec<_>>());
            let err = map_in_order(&items, jobs, |x| {
                if *x >= 20 {
                    // Any typed error that carries the item's number.
                    Err(WioError::TimeLimit { limit_ns: *x })
                } else {
                    Ok(*x)
                }
            })
            .unwrap_err();
            assert!(
                matches!(err, WioError::TimeLimit { limit_ns: 20 }),
                "jobs {jobs}: {err}"
            );
        }
        assert!(map_in_order(&[] as &[u8], 2, |_| Ok(()))
            .unwrap()
            .is_empty());
    }
}
