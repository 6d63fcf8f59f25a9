//! The simulated network's host-side peer: a deterministic responder that
//! answers ARP for its address, ICMP echo (ping) and UDP echo (port 7). It
//! has no clock and no randomness of its own; what it answers is a function
//! of what the guest sends.

/// The peer's IPv4 address (10.0.2.2, as in QEMU's user network).
pub const PEER_IP: [u8; 4] = [10, 0, 2, 2];
/// The peer's MAC address.
pub const PEER_MAC: [u8; 6] = [0x52, 0x54, 0x00, 0x12, 0x34, 0x02];
/// UDP echo port.
pub const UDP_ECHO_PORT: u16 = 7;

const ETH_ARP: u16 = 0x0806;
const ETH_IPV4: u16 = 0x0800;
const IP_ICMP: u8 = 1;
const IP_UDP: u8 = 17;

/// Counters of what the peer answered.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PeerStats {
    /// ARP replies sent.
    pub arp_replies: u64,
    /// ICMP echo replies sent.
    pub echo_replies: u64,
    /// UDP datagrams echoed.
    pub udp_echoes: u64,
    /// Frames the peer ignored.
    pub ignored: u64,
}

/// The peer.
#[derive(Debug, Default)]
pub struct Peer {
    /// What it answered.
    pub stats: PeerStats,
}

fn be16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes([*b.get(at)?, *b.get(at + 1)?]))
}

/// The Internet checksum of `data`.
pub fn checksum(data: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    for pair in data.chunks(2) {
        let word = if pair.len() == 2 {
            u16::from_be_bytes([pair[0], pair[1]])
        } else {
            u16::from_be_bytes([pair[0], 0])
        };
        sum += u32::from(word);
    }
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

impl Peer {
    /// Handles one Ethernet frame from the guest; returns the frames the peer sends back.
    pub fn receive(&mut self, frame: &[u8]) -> Vec<Vec<u8>> {
        let reply = match be16(frame, 12) {
            Some(ETH_ARP) => self.arp(frame),
            Some(ETH_IPV4) => self.ipv4(frame),
            _ => None,
        };
        match reply {
            Some(r) => vec![r],
            None => {
                self.stats.ignored += 1;
                Vec::new()
            }
        }
    }

    fn arp(&mut self, f: &[u8]) -> Option<Vec<u8>> {
        // Ethernet/IPv4 ARP request for the peer's address.
        if f.len() < 42
            || be16(f, 14)? != 1
            || be16(f, 16)? != ETH_IPV4
            || be16(f, 20)? != 1
            || f[38..42] != PEER_IP
        {
            return None;
        }
        let (sender_mac, sender_ip) = (&f[22..28], &f[28..32]);
        let mut r = Vec::with_capacity(42);
        r.extend_from_slice(sender_mac);
        r.extend_from_slice(&PEER_MAC);
        r.extend_from_slice(&ETH_ARP.to_be_bytes());
        r.extend_from_slice(&[0, 1, 8, 0, 6, 4, 0, 2]); // Ethernet, IPv4, sizes, reply
        r.extend_from_slice(&PEER_MAC);
        r.extend_from_slice(&PEER_IP);
        r.extend_from_slice(sender_mac);
        r.extend_from_slice(sender_ip);
        self.stats.arp_replies += 1;
        Some(r)
    }

    fn ipv4(&mut self, f: &[u8]) -> Option<Vec<u8>> {
        let ip = f.get(14..)?;
        let ihl = usize::from(ip.first()? & 0x0f) * 4;
        if ip.first()? >> 4 != 4 || ihl < 20 || ip.get(16..20)? != PEER_IP {
            return None;
        }
        let total = usize::from(be16(ip, 2)?);
        let payload = ip.get(ihl..total)?;
        let (src, dst) = (&ip[12..16], &ip[16..20]);
        let reply_payload = match ip[9] {
            IP_ICMP if payload.first() == Some(&8) && payload.len() >= 8 => {
                let mut p = payload.to_vec();
                p[0] = 0; // echo reply
                p[2] = 0;
                p[3] = 0;
                let c = checksum(&p);
                p[2..4].copy_from_slice(&c.to_be_bytes());
                self.stats.echo_replies += 1;
                p
            }
            IP_UDP if payload.len() >= 8 && be16(payload, 2)? == UDP_ECHO_PORT => {
                let mut p = payload.to_vec();
                p[0..2].copy_from_slice(&payload[2..4]);
                p[2..4].copy_from_slice(&payload[0..2]);
                p[6] = 0; // UDP checksum optional over IPv4
                p[7] = 0;
                self.stats.udp_echoes += 1;
                p
            }
            _ => return None,
        };
        let mut hdr = [0u8; 20];
        hdr[0] = 0x45;
        hdr[2..4].copy_from_slice(&((20 + reply_payload.len()) as u16).to_be_bytes());
        hdr[4..6].copy_from_slice(&ip[4..6]); // reuse the id: deterministic
        hdr[8] = 64;
        hdr[9] = ip[9];
        hdr[12..16].copy_from_slice(dst);
        hdr[16..20].copy_from_slice(src);
        let c = checksum(&hdr);
        hdr[10..12].copy_from_slice(&c.to_be_bytes());
        let mut r = Vec::with_capacity(14 + 20 + reply_payload.len());
        r.extend_from_slice(&f[6..12]);
        r.extend_from_slice(&PEER_MAC);
        r.extend_from_slice(&ETH_IPV4.to_be_bytes());
        r.extend_from_slice(&hdr);
        r.extend_from_slice(&reply_payload);
        Some(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GUEST_MAC: [u8; 6] = [0x52, 0x54, 0x00, 0, 0, 0x15];
    const GUEST_IP: [u8; 4] = [10, 0, 2, 15];

    #[test]
    fn answers_arp_for_its_address_only() {
        let mut f = vec![0xff; 6];
        f.extend_from_slice(&GUEST_MAC);
        f.extend_from_slice(&ETH_ARP.to_be_bytes());
        f.extend_from_slice(&[0, 1, 8, 0, 6, 4, 0, 1]);
        f.extend_from_slice(&GUEST_MAC);
        f.extend_from_slice(&GUEST_IP);
        f.extend_from_slice(&[0; 6]);
        f.extend_from_slice(&PEER_IP);
        let mut p = Peer::default();
        let r = p.receive(&f);
        assert_eq!(r.len(), 1);
        assert_eq!(&r[0][0..6], &GUEST_MAC);
        assert_eq!(&r[0][22..28], &PEER_MAC);
        assert_eq!(&r[0][28..32], &PEER_IP);
        f[41] = 3; // someone else
        assert!(p.receive(&f).is_empty());
    }

    #[test]
    fn answers_ping_with_valid_checksums() {
        let mut icmp = vec![8, 0, 0, 0, 0x12, 0x34, 0, 1, b'h', b'i'];
        let c = checksum(&icmp);
        icmp[2..4].copy_from_slice(&c.to_be_bytes());
        let mut ip = vec![0x45, 0, 0, 0, 0, 7, 0x40, 0, 64, IP_ICMP, 0, 0];
        ip.extend_from_slice(&GUEST_IP);
        ip.extend_from_slice(&PEER_IP);
        let total = (20 + icmp.len()) as u16;
        ip[2..4].copy_from_slice(&total.to_be_bytes());
        let mut f = PEER_MAC.to_vec();
        f.extend_from_slice(&GUEST_MAC);
        f.extend_from_slice(&ETH_IPV4.to_be_bytes());
        f.extend_from_slice(&ip);
        f.extend_from_slice(&icmp);
        let r = Peer::default().receive(&f);
        assert_eq!(r.len(), 1);
        let reply = &r[0];
        assert_eq!(checksum(&reply[14..34]), 0, "IP header checksum");
        assert_eq!(checksum(&reply[34..]), 0, "ICMP checksum");
        assert_eq!(reply[34], 0, "echo reply");
        assert_eq!(&reply[26..30], &PEER_IP);
        assert_eq!(&reply[30..34], &GUEST_IP);
        assert_eq!(&reply[42..], b"hi");
    }
}
