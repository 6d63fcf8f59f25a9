//! A world's promises: every node's programs state theirs on their own machine's channel;
//! the world judges them together, as one system (the Antithesis SDK's semantics): a
//! promise false on any node is violated, a `sometimes` true on any node is met, a
//! must-reach promise reached on any node was reached.

use wio_machines::promises::report::Verdict;
use wio_machines::promises::Status;
use wio_machines::summary::Summary;

fn rank(s: Status) -> u8 {
    match s {
        Status::Violated => 3,
        Status::Passed => 2,
        Status::Unmet => 1,
        Status::Unreached => 0,
    }
}

/// The verdicts of every node's promises joined by id (in id order): the worst-for-the-
/// system status as above, evaluations added up, the earliest first failure (its details
/// name the node).
pub fn join(nodes: &[(String, Summary)]) -> Vec<Verdict> {
    let mut out: Vec<Verdict> = Vec::new();
    for (name, s) in nodes {
        for v in s.promises.iter().flat_map(|p| p.list.iter()) {
            let mut v = v.clone();
            if v.promise.first_failure_ns.is_some() {
                v.promise.first_failure_details = Some(format!(
                    "on {name}{}",
                    v.promise
                        .first_failure_details
                        .as_ref()
                        .map(|d| format!(": {d}"))
                        .unwrap_or_default()
                ));
            }
            match out.iter_mut().find(|w| w.promise.id == v.promise.id) {
                None => out.push(v),
                Some(w) => {
                    if rank(v.status) > rank(w.status) {
                        w.status = v.status;
                    }
                    let (p, q) = (&mut w.promise, &v.promise);
                    p.passes += q.passes;
                    p.failures += q.failures;
                    p.must_hit |= q.must_hit;
                    let earlier = match (p.first_failure_ns, q.first_failure_ns) {
                        (Some(a), Some(b)) => b < a,
                        (None, Some(_)) => true,
                        _ => false,
                    };
                    if earlier {
                        p.first_failure_ns = q.first_failure_ns;
                        p.first_failure_details = q.first_failure_details.clone();
                    }
                }
            }
        }
    }
    out.sort_by(|a, b| a.promise.id.cmp(&b.promise.id));
    out
}
