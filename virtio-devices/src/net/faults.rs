//! Network faults the machine injects into virtio-net ([`NetFault`]): partitions, drop
//! bursts, delay spikes, duplication and reordering, in force between the machine's
//! [`Net::start_fault`](super::Net::start_fault) and
//! [`Net::end_fault`](super::Net::end_fault).
//!
//! What a fault does to a frame depends only on the faults in force and on the device's
//! own fault stream (`name/faults`, see [`wio_scheduler::stream_names::FAULTS`]), which is
//! drawn from only while a fault that needs draws (loss, duplication, reordering) is in
//! force: a run without faults draws exactly what it drew before faults existed.

use std::collections::BTreeMap;
use wio_scheduler::{RunSeed, SavedStream, Stream};

/// Which way a network fault acts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Direction {
    /// Frames to and from the guest.
    Both,
    /// Frames travelling to the guest (from the peer, or arriving through the port).
    ToGuest,
    /// Frames the guest transmits (to the peer, or into the port's outbox).
    FromGuest,
}

impl Direction {
    /// Whether frames going `to_guest` (else from the guest) go this way.
    pub fn covers(self, to_guest: bool) -> bool {
        match self {
            Direction::Both => true,
            Direction::ToGuest => to_guest,
            Direction::FromGuest => !to_guest,
        }
    }
}

/// A network fault in force.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum NetFault {
    /// Frames going `Direction` are dropped (a partition; both ways or one way).
    Partition(Direction),
    /// Each frame, both ways, is lost with probability ppm / 1e6 (a drop burst), on top of
    /// the link's own loss.
    Loss {
        /// Frames lost, per million.
        ppm: u64,
    },
    /// Each frame, both ways, takes `extra_ns` longer (a delay spike).
    Delay {
        /// Virtual ns added to every frame's delay.
        extra_ns: u64,
    },
    /// Each frame, both ways, is duplicated with probability ppm / 1e6.
    Duplicate {
        /// Frames duplicated, per million.
        ppm: u64,
    },
    /// Each frame, both ways, gets an extra delay drawn uniformly from [0, max_ns], so
    /// frames overtake each other (reordering).
    Reorder {
        /// Largest extra delay in virtual ns.
        max_ns: u64,
    },
}

/// Denominator of the per-million rates.
const PPM: u64 = 1_000_000;

/// The faults in force on one network device and the stream their draws come from.
pub(crate) struct Faults {
    in_force: BTreeMap<u64, NetFault>,
    stream: Stream,
}

/// What a snapshot keeps of the faults.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub(crate) struct FaultsState {
    in_force: Vec<(u64, NetFault)>,
    stream: SavedStream,
}

impl Faults {
    /// No fault in force; draws come from `seed`'s stream `name`.
    pub(crate) fn new(seed: RunSeed, name: &str) -> Faults {
        Faults {
            in_force: BTreeMap::new(),
            stream: seed.stream(name),
        }
    }

    /// Fault `id` is in force from now on (replacing a fault of the same id).
    pub(crate) fn start(&mut self, id: u64, fault: NetFault) {
        self.in_force.insert(id, fault);
    }

    /// Fault `id` is no longer in force (nothing happens for an unknown id).
    pub(crate) fn end(&mut self, id: u64) {
        self.in_force.remove(&id);
    }

    /// The faults in force, in id order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (u64, NetFault)> + '_ {
        self.in_force.iter().map(|(id, f)| (*id, *f))
    }

    /// Whether a partition in force cuts frames going `to_guest` (else from the guest).
    pub(crate) fn partitioned(&self, to_guest: bool) -> bool {
        self.in_force
            .values()
            .any(|f| matches!(f, NetFault::Partition(d) if d.covers(to_guest)))
    }

    /// A frame going `to_guest` (else from the guest) enters the wire: a partition drops
    /// it (without draws); otherwise every loss and duplication fault in force draws once,
    /// in id order, and the frame is lost if any loss fault says so. Returns how many
    /// extra copies duplication faults made, or None when the frame is dropped.
    pub(crate) fn enter(&mut self, to_guest: bool) -> Option<u32> {
        if self.partitioned(to_guest) {
            return None;
        }
        let mut lost = false;
        let mut copies = 0u32;
        for fault in self.in_force.values() {
            match *fault {
                NetFault::Loss { ppm } => lost |= self.stream.chance(ppm, PPM),
                NetFault::Duplicate { ppm } => {
                    copies = copies.saturating_add(u32::from(self.stream.chance(ppm, PPM)));
                }
                NetFault::Partition(_) | NetFault::Delay { .. } | NetFault::Reorder { .. } => {}
            }
        }
        (!lost).then_some(copies)
    }

    /// The extra delay of one frame (one copy): every delay fault's `extra_ns` plus one
    /// draw in [0, max_ns] per reordering fault in force, in id order.
    pub(crate) fn extra_delay(&mut self) -> u64 {
        let mut extra = 0u64;
        for fault in self.in_force.values() {
            match *fault {
                NetFault::Delay { extra_ns } => extra = extra.saturating_add(extra_ns),
                NetFault::Reorder { max_ns } => {
                    extra = extra.saturating_add(self.stream.range_inclusive(0, max_ns));
                }
                NetFault::Partition(_) | NetFault::Loss { .. } | NetFault::Duplicate { .. } => {}
            }
        }
        extra
    }

    /// The faults in force and the stream's position, for a snapshot.
    pub(crate) fn save(&self) -> FaultsState {
        FaultsState {
            in_force: self.iter().collect(),
            stream: self.stream.save(),
        }
    }

    /// Faults saved by [`Faults::save`]; with `reseed`, the stream is re-keyed from it.
    pub(crate) fn resume(state: &FaultsState, reseed: Option<RunSeed>) -> Faults {
        Faults {
            in_force: state.in_force.iter().copied().collect(),
            stream: Stream::resume(&state.stream, reseed),
        }
    }

    /// The stream's position (for tests: draws happen only while faults need them).
    #[cfg(test)]
    pub(crate) fn position(&self) -> wio_scheduler::StreamPosition {
        self.stream.position()
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::arp_request;
    use super::super::*;
    use crate::device::test_request as req;
    use std::cell::RefCell;
    use std::rc::Rc;
    use vm_memory::GuestAddress;

    fn mem() -> GuestMem {
        let mem = GuestMem::from_ranges(&[(GuestAddress(0), 0x10_0000)]).unwrap();
        mem.write_slice(&arp_request(), GuestAddress(0x1000))
            .unwrap();
        mem
    }

    fn net(seed: u64) -> Net {
        Net::new(RunSeed(seed), "net", Link::default(), None)
    }

    /// The guest transmits its ARP request at `now_ns`.
    fn guest_sends(net: &mut Net, mem: &GuestMem, head: u16, now_ns: u64) {
        let len = arp_request().len() as u32;
        assert_eq!(
            net.complete(TX, &req(head, &[(0x1000, len, false)]), mem, now_ns)
                .unwrap(),
            0
        );
    }

    /// Timers of frames on the wire (not the peer's polls).
    fn flights(net: &mut Net) -> Vec<(u64, u64)> {
        net.take_timers()
            .into_iter()
            .filter(|&(_, t)| t != POLL_STACK && t != DELIVER_NOW)
            .collect()
    }

    /// A frame from outside, addressed to the guest.
    fn incoming(at_ns: u64) -> Frame {
        let mut bytes = arp_request()[NET_HDR_LEN..].to_vec();
        bytes[0..6].copy_from_slice(&GUEST_MAC);
        Frame { at_ns, bytes }
    }

    #[derive(Clone, Default)]
    struct Shared(Rc<RefCell<Vec<u8>>>);

    impl std::io::Write for Shared {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.borrow_mut().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_partition_from_the_guest_drops_its_frames_until_it_ends() {
        let mem = mem();
        let capture = Shared::default();
        let pcap = Pcap::new(Box::new(capture.clone())).unwrap();
        let mut net = Net::new(RunSeed(3), "net", Link::default(), Some(pcap));
        net.start_fault(4, NetFault::Partition(Direction::FromGuest));
        assert_eq!(
            net.faults_in_force().collect::<Vec<_>>(),
            vec![(4, NetFault::Partition(Direction::FromGuest))]
        );
        let before = capture.0.borrow().len();
        for i in 0..3 {
            guest_sends(&mut net, &mem, i, 100);
        }
        assert!(net.take_timers().is_empty(), "nothing on the wire");
        assert_eq!((net.stats.tx_frames, net.stats.fault_drops), (3, 3));
        assert_eq!(
            capture.0.borrow().len() - before,
            3 * (16 + arp_request().len() - NET_HDR_LEN),
            "the guest's frames are still captured where they were sent"
        );

        // The partition ends: the request reaches the peer and its reply the guest.
        net.end_fault(4);
        net.end_fault(4); // again: nothing happens
        assert_eq!(net.faults_in_force().count(), 0);
        net.rx_buffers.push_back(req(9, &[(0x8000, 2048, true)]));
        guest_sends(&mut net, &mem, 3, 1_000);
        let hop = flights(&mut net);
        assert_eq!(hop.len(), 1);
        assert!(net
            .timer(hop[0].1, &mem, 1_000 + hop[0].0)
            .unwrap()
            .is_empty());
        let back = flights(&mut net);
        assert_eq!(back.len(), 1);
        let done = net.timer(back[0].1, &mem, 2_000_000).unwrap();
        assert_eq!(done.len(), 1);
        assert_eq!((net.stats.rx_frames, net.stats.fault_drops), (1, 3));

        // A partition starting while a frame is on the wire drops it when it arrives.
        guest_sends(&mut net, &mem, 4, 3_000_000);
        let hop = flights(&mut net);
        net.start_fault(5, NetFault::Partition(Direction::Both));
        assert!(net.timer(hop[0].1, &mem, 3_100_000).unwrap().is_empty());
        assert!(flights(&mut net).is_empty(), "the peer never saw it");
        assert_eq!(net.stats.fault_drops, 4);
    }

    #[test]
    fn a_partition_to_the_guest_drops_the_replies() {
        let mem = mem();
        let mut net = net(3);
        net.rx_buffers.push_back(req(9, &[(0x8000, 2048, true)]));
        // In force before the peer replies: the reply never gets on the wire.
        net.start_fault(0, NetFault::Partition(Direction::ToGuest));
        guest_sends(&mut net, &mem, 0, 100);
        let hop = flights(&mut net);
        assert_eq!(hop.len(), 1, "the guest's frame goes out");
        net.timer(hop[0].1, &mem, 100 + hop[0].0).unwrap();
        assert!(flights(&mut net).is_empty());
        assert_eq!(net.stats.fault_drops, 1);
        // Started while the reply is on the wire: dropped at the guest's door.
        net.end_fault(0);
        guest_sends(&mut net, &mem, 1, 1_000_000);
        let hop = flights(&mut net);
        net.timer(hop[0].1, &mem, 1_000_000 + hop[0].0).unwrap();
        let back = flights(&mut net);
        assert_eq!(back.len(), 1);
        net.start_fault(1, NetFault::Partition(Direction::ToGuest));
        assert!(net.timer(back[0].1, &mem, 2_000_000).unwrap().is_empty());
        assert_eq!((net.stats.rx_frames, net.stats.fault_drops), (0, 2));
        assert!(net.inbox.is_empty());
    }

    #[test]
    fn loss_drops_at_its_rate_and_draws_only_from_the_fault_stream() {
        let mem = mem();
        let mut all = net(5);
        all.start_fault(0, NetFault::Loss { ppm: 1_000_000 });
        let mut none = net(5);
        none.start_fault(0, NetFault::Loss { ppm: 0 });
        let mut plain = net(5);
        for i in 0..20 {
            guest_sends(&mut all, &mem, i, u64::from(i) * 1000);
            guest_sends(&mut none, &mem, i, u64::from(i) * 1000);
            guest_sends(&mut plain, &mem, i, u64::from(i) * 1000);
        }
        assert!(all.take_timers().is_empty());
        assert_eq!(all.stats.fault_drops, 20);
        assert_eq!(none.stats.fault_drops, 0);
        assert_eq!(none.take_timers(), plain.take_timers(), "ppm 0 drops none");
        assert_eq!(none.stream.position(), plain.stream.position());
        assert_ne!(none.faults.position(), plain.faults.position());
    }

    #[test]
    fn duplication_delay_and_reordering_change_the_timers() {
        let mem = mem();
        let mut plain = net(7);
        let mut dup = net(7);
        dup.start_fault(0, NetFault::Duplicate { ppm: 1_000_000 });
        for i in 0..10 {
            guest_sends(&mut dup, &mem, i, 0);
        }
        for i in 0..20 {
            guest_sends(&mut plain, &mem, i, 0);
        }
        // Each copy crosses the link on its own: the link draws of twice the frames.
        assert_eq!(dup.take_timers(), plain.take_timers());
        assert_eq!(dup.stats.fault_duplicates, 10);

        let mut plain = net(7);
        let mut delayed = net(7);
        delayed.start_fault(2, NetFault::Delay { extra_ns: 300_000 });
        delayed.start_fault(1, NetFault::Delay { extra_ns: 5 });
        for i in 0..10 {
            guest_sends(&mut plain, &mem, i, 0);
            guest_sends(&mut delayed, &mem, i, 0);
        }
        let base = plain.take_timers();
        let shifted: Vec<_> = base.iter().map(|&(d, t)| (d + 300_005, t)).collect();
        assert_eq!(delayed.take_timers(), shifted);
        assert_eq!(
            delayed.faults.position(),
            net(7).faults.position(),
            "a delay draws nothing"
        );

        // Frames 100 us apart never overtake each other on the plain link (jitter 20 us);
        // with up to 1 ms of reordering some do.
        let mut plain = net(7);
        let mut reordered = net(7);
        reordered.start_fault(0, NetFault::Reorder { max_ns: 1_000_000 });
        for i in 0..20 {
            guest_sends(&mut plain, &mem, i, u64::from(i) * 100_000);
            guest_sends(&mut reordered, &mem, i, u64::from(i) * 100_000);
        }
        let arrivals = |timers: &[(u64, u64)]| -> Vec<u64> {
            timers
                .iter()
                .zip(0u64..)
                .map(|(&(d, _), i)| i * 100_000 + d)
                .collect()
        };
        let (base, shuffled) = (plain.take_timers(), reordered.take_timers());
        assert!(arrivals(&base).windows(2).all(|w| w[0] < w[1]));
        assert!(arrivals(&shuffled).windows(2).any(|w| w[0] > w[1]));
        for (b, s) in base.iter().zip(&shuffled) {
            assert_eq!(b.1, s.1);
            assert!((b.0..=b.0 + 1_000_000).contains(&s.0), "{b:?} {s:?}");
        }
    }

    #[test]
    fn without_a_fault_in_force_the_device_is_the_one_that_never_had_faults() {
        let mem = mem();
        let mut plain = net(11);
        let mut faulted = net(11);
        // Faults that come and go without traffic leave no trace.
        faulted.start_fault(0, NetFault::Reorder { max_ns: 1_000 });
        faulted.start_fault(1, NetFault::Partition(Direction::Both));
        faulted.end_fault(0);
        faulted.end_fault(1);
        // A fault that draws but changes nothing (loss 0) leaves the link alone.
        faulted.start_fault(2, NetFault::Loss { ppm: 0 });
        for i in 0..5 {
            guest_sends(&mut plain, &mem, i, 0);
            guest_sends(&mut faulted, &mem, i, 0);
        }
        faulted.end_fault(2);
        let fault_draws = faulted.faults.position();
        for i in 5..10 {
            guest_sends(&mut plain, &mem, i, 50);
            guest_sends(&mut faulted, &mem, i, 50);
        }
        assert_eq!(faulted.faults.position(), fault_draws, "no fault, no draw");
        let (a, b) = (plain.take_timers(), faulted.take_timers());
        assert_eq!(a, b);
        // And the replies come back alike.
        for &(d, t) in &a {
            plain.timer(t, &mem, 50 + d).unwrap();
            faulted.timer(t, &mem, 50 + d).unwrap();
        }
        assert_eq!(plain.take_timers(), faulted.take_timers());
        assert_eq!(plain.stream.position(), faulted.stream.position());
        assert_eq!(plain.stats, faulted.stats);
    }

    #[test]
    fn in_port_mode_faults_act_on_the_outbox_and_on_arrivals() {
        let mem = mem();
        let mut net = net(3);
        net.connect_port();
        net.start_fault(0, NetFault::Partition(Direction::Both));
        guest_sends(&mut net, &mem, 0, 100);
        assert!(net.take_sent().is_empty(), "the outbox stays empty");
        net.arrive(incoming(900), 200).unwrap();
        assert!(net.take_timers().is_empty(), "dropped where it came in");
        assert_eq!(net.stats.fault_drops, 2);

        // A partition toward the guest lets the guest's frames out and drops arrivals when
        // they reach the guest.
        net.end_fault(0);
        net.start_fault(1, NetFault::Partition(Direction::FromGuest));
        net.arrive(incoming(900), 200).unwrap();
        net.end_fault(1);
        net.start_fault(2, NetFault::Partition(Direction::ToGuest));
        guest_sends(&mut net, &mem, 1, 300);
        assert_eq!(net.take_sent().len(), 1);
        let timers = net.take_timers();
        assert_eq!(timers, vec![(700, timers[0].1)]);
        net.rx_buffers.push_back(req(5, &[(0x8000, 2048, true)]));
        assert!(net.timer(timers[0].1, &mem, 900).unwrap().is_empty());
        assert_eq!(net.stats.fault_drops, 3);

        // Delay and duplication act on arrivals; duplication on the outbox too.
        net.end_fault(2);
        net.start_fault(3, NetFault::Delay { extra_ns: 50 });
        net.start_fault(4, NetFault::Duplicate { ppm: 1_000_000 });
        net.arrive(incoming(1_000), 1_000).unwrap();
        let timers = net.take_timers();
        assert_eq!(timers.iter().map(|t| t.0).collect::<Vec<_>>(), vec![50, 50]);
        guest_sends(&mut net, &mem, 2, 1_000);
        let sent = net.take_sent();
        assert_eq!(sent.len(), 2);
        assert!(
            sent.iter().all(|f| f.at_ns == 1_000),
            "sent when the guest sent it"
        );
        let done = net.timer(timers[0].1, &mem, 1_050).unwrap();
        assert_eq!(done.len(), 1);
        assert_eq!(net.stats.rx_frames, 1);
        assert_eq!(net.stats.fault_duplicates, 2);
    }

    #[test]
    fn faults_and_their_stream_survive_a_snapshot_and_a_rekeyed_restore_changes_draws() {
        let mem = mem();
        // A link without jitter: the timers show only which frames the fault lost.
        let link = Link {
            jitter_ns: 0,
            ..Link::default()
        };
        let mut net = Net::new(RunSeed(21), "net", link, None);
        net.start_fault(8, NetFault::Loss { ppm: 500_000 });
        net.start_fault(3, NetFault::Delay { extra_ns: 10 });
        for i in 0..10 {
            guest_sends(&mut net, &mem, i, 0);
        }
        net.take_timers();
        let saved = net.save_state().unwrap();
        let restore = |reseed| {
            let mut copy = Net::new(RunSeed(21), "net", link, None);
            copy.load_state(&saved, reseed).unwrap();
            copy
        };
        let mut same = restore(None);
        let mut rekeyed = restore(Some(RunSeed(22)));
        assert_eq!(
            same.faults_in_force().collect::<Vec<_>>(),
            vec![
                (3, NetFault::Delay { extra_ns: 10 }),
                (8, NetFault::Loss { ppm: 500_000 })
            ]
        );
        assert_eq!(
            rekeyed.faults_in_force().collect::<Vec<_>>(),
            net.faults_in_force().collect::<Vec<_>>()
        );
        let run = |n: &mut Net| {
            for i in 10..74 {
                guest_sends(n, &mem, i, 0);
            }
            (n.take_timers(), n.stats.fault_drops)
        };
        let original = run(&mut net);
        assert_eq!(run(&mut same), original);
        assert!(original.0.iter().all(|&(d, _)| d == 50_010));
        assert_ne!(run(&mut rekeyed), original, "other loss draws");
    }
}
