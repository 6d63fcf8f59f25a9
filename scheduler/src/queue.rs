//! The event queue: future events ordered by virtual time, then by sequence.
//!
//! Events scheduled for the same virtual nanosecond fire in the order they
//! were pushed (FIFO), because each push gets the next sequence number and the
//! queue is keyed by `(time_ns, seq)`. Only ordered maps are used, so iteration
//! order is a function of the pushes alone.

use std::collections::BTreeMap;

use crate::error::SchedulerError;

/// The maximum number of events an [`EventQueue`] may hold at once.
///
/// An explicit bound (TigerBeetle style) turns unbounded growth — e.g. a guest
/// arming timers in a loop — into a reported error instead of memory
/// exhaustion.
pub const MAX_EVENTS: usize = 1 << 20;

/// Identifies one pushed event; it is the event's sequence number.
///
/// Sequence numbers start at 0 and increase by one for every push, so ids are
/// unique for the lifetime of a queue and also record push order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EventId(u64);

impl EventId {
    /// The id of the event pushed with sequence number `seq` (for ids kept in snapshots).
    pub fn from_seq(seq: u64) -> EventId {
        EventId(seq)
    }

    /// The sequence number this id stands for (its push order).
    pub fn seq(&self) -> u64 {
        self.0
    }
}

/// An event taken out of the queue together with when it was scheduled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScheduledEvent<E> {
    /// The virtual time (ns) the event was scheduled for.
    pub time_ns: u64,
    /// The id returned when the event was pushed.
    pub id: EventId,
    /// The event payload.
    pub event: E,
}

/// A deterministic priority queue of events keyed by virtual time.
///
/// Ordering is by `time_ns`, then by push sequence, so ties are FIFO. Events
/// can be cancelled by [`EventId`] via a secondary index from sequence number
/// to time.
#[derive(Debug, Clone)]
pub struct EventQueue<E> {
    /// Pending events keyed by `(time_ns, seq)`.
    events: BTreeMap<(u64, u64), E>,
    /// Secondary index `seq -> time_ns`, used to find an event by its id.
    times_by_seq: BTreeMap<u64, u64>,
    /// The sequence number the next push will get.
    next_seq: u64,
}

impl<E> Default for EventQueue<E> {
    /// An empty queue, same as [`EventQueue::new`].
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    /// An empty queue whose first push gets sequence number 0.
    pub fn new() -> Self {
        Self {
            events: BTreeMap::new(),
            times_by_seq: BTreeMap::new(),
            next_seq: 0,
        }
    }

    /// Schedules `event` at virtual time `time_ns` and returns its id.
    ///
    /// Times in the past are allowed; such events are simply due at once.
    ///
    /// # Errors
    ///
    /// [`SchedulerError::QueueFull`] if the queue already holds
    /// [`MAX_EVENTS`] events. No sequence number is consumed in that case.
    pub fn push(&mut self, time_ns: u64, event: E) -> Result<EventId, SchedulerError> {
        if self.events.len() >= MAX_EVENTS {
            return Err(SchedulerError::QueueFull { limit: MAX_EVENTS });
        }
        let seq = self.next_seq;
        self.next_seq = seq
            .checked_add(1)
            .expect("event sequence numbers exhausted u64");
        self.events.insert((time_ns, seq), event);
        self.times_by_seq.insert(seq, time_ns);
        self.debug_check();
        Ok(EventId(seq))
    }

    /// The time of the earliest pending event, e.g. to decide how far a
    /// halted vCPU may jump the clock.
    pub fn peek_time(&self) -> Option<u64> {
        self.events.first_key_value().map(|(&(time, _), _)| time)
    }

    /// Removes and returns the earliest event if it is due at `now_ns`
    /// (scheduled at or before it); ties go to the lowest sequence number.
    pub fn pop_due(&mut self, now_ns: u64) -> Option<ScheduledEvent<E>> {
        let due = match self.peek_time() {
            Some(time) if time <= now_ns => self.pop_next(),
            _ => None,
        };
        debug_assert!(due.as_ref().is_none_or(|e| e.time_ns <= now_ns));
        due
    }

    /// The queue's invariants, checked in debug builds after every change: both indexes
    /// hold the same events, and no event has a sequence number not yet handed out.
    fn debug_check(&self) {
        debug_assert_eq!(self.events.len(), self.times_by_seq.len());
        debug_assert!(self
            .times_by_seq
            .last_key_value()
            .is_none_or(|(&seq, _)| seq < self.next_seq));
    }

    /// Removes and returns the earliest event regardless of the current time.
    pub fn pop_next(&mut self) -> Option<ScheduledEvent<E>> {
        let ((time_ns, seq), event) = self.events.pop_first()?;
        self.times_by_seq.remove(&seq);
        self.debug_check();
        // The earliest pending event: nothing left in the queue comes before it.
        debug_assert!(self
            .events
            .first_key_value()
            .is_none_or(|(&k, _)| k > (time_ns, seq)));
        Some(ScheduledEvent {
            time_ns,
            id: EventId(seq),
            event,
        })
    }

    /// Removes the event with id `id` and returns it, or `None` if it already
    /// fired or was cancelled. Cancelling twice is therefore harmless.
    pub fn cancel(&mut self, id: EventId) -> Option<E> {
        let time = self.times_by_seq.remove(&id.0)?;
        self.events.remove(&(time, id.0))
    }

    /// Removes every pending event for which `pred` holds and returns how many went.
    /// The others keep their (time, sequence) keys, so they fire in the order they
    /// would have; no sequence number is consumed or reused. A restore that replaces
    /// part of a plan (its future faults) takes the old events out so.
    pub fn remove_where(&mut self, mut pred: impl FnMut(&E) -> bool) -> usize {
        let gone: Vec<(u64, u64)> = self
            .events
            .iter()
            .filter(|(_, event)| pred(event))
            .map(|(&key, _)| key)
            .collect();
        for key in &gone {
            self.events.remove(key);
            self.times_by_seq.remove(&key.1);
        }
        gone.len()
    }

    /// The number of pending events.
    pub fn len(&self) -> usize {
        self.events.len()
    }

    /// Whether no events are pending.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// The sequence number the next push will receive; part of the state a
    /// snapshot must record to resume with identical ids.
    pub fn next_seq(&self) -> u64 {
        self.next_seq
    }

    /// Rebuilds a queue from what a snapshot recorded: the pending events as
    /// `(time_ns, seq, event)` and the next sequence number. Refuses
    /// duplicate or future sequence numbers and more than [`MAX_EVENTS`] events.
    pub fn from_parts(events: Vec<(u64, u64, E)>, next_seq: u64) -> Result<Self, SchedulerError> {
        if events.len() > MAX_EVENTS {
            return Err(SchedulerError::QueueFull { limit: MAX_EVENTS });
        }
        let mut q = Self::new();
        q.next_seq = next_seq;
        for (time, seq, event) in events {
            if seq >= next_seq || q.times_by_seq.insert(seq, time).is_some() {
                return Err(SchedulerError::BadRestore { seq, next_seq });
            }
            q.events.insert((time, seq), event);
        }
        Ok(q)
    }

    /// All pending events as `(time_ns, seq, &event)` in firing order, for
    /// snapshots and traces.
    pub fn iter(&self) -> impl Iterator<Item = (u64, u64, &E)> + '_ {
        self.events
            .iter()
            .map(|(&(time, seq), event)| (time, seq, event))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::streams::RunSeed;

    #[test]
    fn orders_by_time_then_seq() {
        let mut q = EventQueue::new();
        q.push(30, "c").unwrap();
        q.push(10, "a").unwrap();
        q.push(20, "b").unwrap();
        assert_eq!(q.peek_time(), Some(10));
        let order: Vec<_> = std::iter::from_fn(|| q.pop_next())
            .map(|e| (e.time_ns, e.event))
            .collect();
        assert_eq!(order, [(10, "a"), (20, "b"), (30, "c")]);
        assert!(q.is_empty());
        assert_eq!(q.peek_time(), None);
    }

    #[test]
    fn ties_are_fifo() {
        let mut q = EventQueue::new();
        let ids: Vec<EventId> = (0..5).map(|i| q.push(7, i).unwrap()).collect();
        assert_eq!(
            ids.iter().map(EventId::seq).collect::<Vec<_>>(),
            [0, 1, 2, 3, 4]
        );
        let popped: Vec<_> = std::iter::from_fn(|| q.pop_next()).collect();
        assert_eq!(
            popped.iter().map(|e| e.event).collect::<Vec<_>>(),
            [0, 1, 2, 3, 4]
        );
        assert_eq!(popped.iter().map(|e| e.id).collect::<Vec<_>>(), ids);
    }

    #[test]
    fn seq_increments_per_push() {
        let mut q = EventQueue::new();
        assert_eq!(q.next_seq(), 0);
        let a = q.push(5, ()).unwrap();
        q.pop_next();
        let b = q.push(1, ()).unwrap();
        assert_eq!((a.seq(), b.seq()), (0, 1));
        assert_eq!(q.next_seq(), 2);
    }

    #[test]
    fn pop_due_respects_now() {
        let mut q = EventQueue::new();
        q.push(100, 'x').unwrap();
        q.push(50, 'y').unwrap();
        assert!(q.pop_due(49).is_none());
        let y = q.pop_due(50).unwrap();
        assert_eq!((y.time_ns, y.event), (50, 'y'));
        assert!(q.pop_due(99).is_none());
        assert_eq!(q.len(), 1);
        assert_eq!(q.pop_due(1_000).unwrap().event, 'x');
        assert!(q.pop_due(u64::MAX).is_none());
    }

    #[test]
    fn cancel_works_and_is_idempotent() {
        let mut q = EventQueue::new();
        let a = q.push(10, "a").unwrap();
        let b = q.push(10, "b").unwrap();
        let c = q.push(5, "c").unwrap();
        assert_eq!(q.cancel(b), Some("b"));
        assert_eq!(q.cancel(b), None);
        assert_eq!(q.len(), 2);
        assert_eq!(q.pop_next().unwrap().id, c);
        assert_eq!(q.cancel(c), None, "already fired");
        assert_eq!(q.pop_next().unwrap().id, a);
        assert!(q.pop_next().is_none());
        assert_eq!(q.cancel(EventId(999)), None, "never pushed");
    }

    #[test]
    fn remove_where_keeps_the_others_in_order() {
        let mut q = EventQueue::new();
        q.push(5, 'a').unwrap();
        let b = q.push(3, 'b').unwrap();
        q.push(5, 'c').unwrap();
        q.push(1, 'd').unwrap();
        assert_eq!(q.remove_where(|e| *e == 'a' || *e == 'd'), 2);
        assert_eq!(q.remove_where(|e| *e == 'z'), 0);
        assert_eq!(q.len(), 2);
        assert_eq!(q.next_seq(), 4, "no sequence number is reused");
        assert_eq!(q.cancel(b), Some('b'), "the index follows the removal");
        let e = q.push(5, 'e').unwrap();
        assert_eq!(e.seq(), 4);
        let order: Vec<_> = std::iter::from_fn(|| q.pop_next())
            .map(|e| (e.time_ns, e.id.seq(), e.event))
            .collect();
        assert_eq!(order, [(5, 2, 'c'), (5, 4, 'e')]);
    }

    #[test]
    fn iter_is_in_firing_order() {
        let mut q = EventQueue::new();
        q.push(3, 'a').unwrap();
        q.push(1, 'b').unwrap();
        q.push(3, 'c').unwrap();
        q.push(2, 'd').unwrap();
        let items: Vec<_> = q.iter().map(|(t, s, &e)| (t, s, e)).collect();
        assert_eq!(items, [(1, 1, 'b'), (2, 3, 'd'), (3, 0, 'a'), (3, 2, 'c')]);
    }

    #[test]
    fn push_fails_when_full() {
        let mut q = EventQueue::new();
        for i in 0..MAX_EVENTS {
            q.push(0, ())
                .unwrap_or_else(|e| panic!("push {i} failed: {e}"));
        }
        let seq = q.next_seq();
        assert_eq!(
            q.push(0, ()),
            Err(SchedulerError::QueueFull { limit: MAX_EVENTS })
        );
        assert_eq!(
            q.next_seq(),
            seq,
            "a failed push consumes no sequence number"
        );
        q.pop_next();
        assert!(q.push(0, ()).is_ok());
    }

    /// Compares the queue against a trivially correct model (a Vec sorted on
    /// demand) under a seeded random mix of operations.
    #[test]
    fn randomized_against_sorted_vec_model() {
        for seed in 0..8 {
            let mut rng = RunSeed(seed).stream("queue-model-test");
            let mut q = EventQueue::new();
            // Model entries: (time_ns, seq, payload).
            let mut model: Vec<(u64, u64, u64)> = Vec::new();
            let mut ids: Vec<EventId> = Vec::new();
            let mut now = 0u64;
            for step in 0..2_000u64 {
                match rng.below(5) {
                    0 | 1 => {
                        let time = now + rng.below(50);
                        let id = q.push(time, step).unwrap();
                        model.push((time, id.seq(), step));
                        ids.push(id);
                    }
                    2 => {
                        now += rng.below(20);
                        model.sort_unstable();
                        let expected = match model.first() {
                            Some(&(t, _, _)) if t <= now => Some(model.remove(0)),
                            _ => None,
                        };
                        let got = q.pop_due(now).map(|e| (e.time_ns, e.id.seq(), e.event));
                        assert_eq!(got, expected);
                    }
                    3 => {
                        if !ids.is_empty() {
                            let idx = rng.below(ids.len() as u64) as usize;
                            let id = ids[idx];
                            let expected = model
                                .iter()
                                .position(|&(_, s, _)| s == id.seq())
                                .map(|i| model.remove(i).2);
                            assert_eq!(q.cancel(id), expected);
                        }
                    }
                    _ => {
                        model.sort_unstable();
                        let expected = (!model.is_empty()).then(|| model.remove(0));
                        let got = q.pop_next().map(|e| (e.time_ns, e.id.seq(), e.event));
                        assert_eq!(got, expected);
                    }
                }
                model.sort_unstable();
                assert_eq!(q.len(), model.len());
                assert_eq!(q.peek_time(), model.first().map(|m| m.0));
                let listed: Vec<_> = q.iter().map(|(t, s, &e)| (t, s, e)).collect();
                assert_eq!(listed, model);
            }
        }
    }

    #[test]
    fn from_parts_restores_order_and_ids() {
        let mut q = EventQueue::new();
        q.push(30, 'a').unwrap();
        q.push(10, 'b').unwrap();
        q.push(10, 'c').unwrap();
        q.pop_next();
        let parts: Vec<(u64, u64, char)> = q.iter().map(|(t, s, e)| (t, s, *e)).collect();
        let mut r = EventQueue::from_parts(parts, q.next_seq()).unwrap();
        assert_eq!(r.push(10, 'd').unwrap(), q.push(10, 'd').unwrap());
        while let Some(e) = q.pop_next() {
            assert_eq!(r.pop_next(), Some(e));
        }
        assert!(r.is_empty());
        assert_eq!(
            EventQueue::from_parts(vec![(1, 5, 'x')], 5).unwrap_err(),
            SchedulerError::BadRestore {
                seq: 5,
                next_seq: 5
            }
        );
        assert!(EventQueue::from_parts(vec![(1, 1, 'x'), (2, 1, 'y')], 5).is_err());
    }
}
