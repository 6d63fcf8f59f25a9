//! The peer's DNS service (UDP port 53, when it is given names): A records for the names
//! of a run with a host link (its allowed destinations, and a world's nodes, peer and
//! dependencies), NXDOMAIN for every other name, so a guest that resolves through the
//! peer reaches nothing by a name it was not given. Answers are a pure function of the
//! query and the names (no randomness, no time), written by hand: the subset is small
//! (one question, A and AAAA, no compression in queries) and no well-kept crate writes
//! answers without a resolver's worth of dependencies.

/// The port it answers on.
pub const DNS_PORT: u16 = 53;
/// Seconds a guest may keep an answer.
const TTL: u32 = 60;

/// A name the peer answers, and its IPv4 address.
pub type Name = (String, [u8; 4]);

/// What a query got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// A name it knows (answered, with an address for an A query).
    Known,
    /// A name it does not know (NXDOMAIN).
    Unknown,
    /// Not a query it can read (FORMERR, or nothing for what is not a query at all).
    Malformed,
}

/// The answer to `query` from `names`, and what it was; None when `query` is not a DNS
/// query at all (nothing is sent back).
pub fn answer(query: &[u8], names: &[Name]) -> Option<(Vec<u8>, Outcome)> {
    if query.len() < 12 || query[2] & 0x80 != 0 {
        return None;
    }
    let reply = |rcode: u8, question: &[u8], answer: Option<[u8; 4]>| {
        let mut out = Vec::with_capacity(12 + question.len() + 16);
        out.extend_from_slice(&query[..2]);
        // QR, opcode 0, AA, RD as asked; RA 0; the rcode.
        out.push(0x84 | (query[2] & 0x01));
        out.push(rcode);
        let qd = u16::from(!question.is_empty());
        out.extend_from_slice(&qd.to_be_bytes());
        out.extend_from_slice(&u16::from(answer.is_some()).to_be_bytes());
        out.extend_from_slice(&[0, 0, 0, 0]);
        out.extend_from_slice(question);
        if let Some(ip) = answer {
            out.extend_from_slice(&[0xc0, 12, 0, 1, 0, 1]);
            out.extend_from_slice(&TTL.to_be_bytes());
            out.extend_from_slice(&[0, 4]);
            out.extend_from_slice(&ip);
        }
        out
    };
    let formerr = || Some((reply(1, &[], None), Outcome::Malformed));
    let opcode = (query[2] >> 3) & 0x0f;
    let qdcount = u16::from_be_bytes([query[4], query[5]]);
    if opcode != 0 || qdcount != 1 {
        return formerr();
    }
    let mut at = 12;
    let mut labels: Vec<String> = Vec::new();
    loop {
        let Some(&len) = query.get(at) else {
            return formerr();
        };
        at += 1;
        if len == 0 {
            break;
        }
        if len > 63 {
            return formerr();
        }
        let Some(label) = query.get(at..at + usize::from(len)) else {
            return formerr();
        };
        labels.push(String::from_utf8_lossy(label).to_ascii_lowercase());
        at += usize::from(len);
    }
    let Some(tail) = query.get(at..at + 4) else {
        return formerr();
    };
    let question = &query[12..at + 4];
    let qtype = u16::from_be_bytes([tail[0], tail[1]]);
    let name = labels.join(".");
    match names.iter().find(|(n, _)| n.eq_ignore_ascii_case(&name)) {
        Some((_, ip)) => {
            let a = (qtype == 1).then_some(*ip);
            Some((reply(0, question, a), Outcome::Known))
        }
        None => Some((reply(3, question, None), Outcome::Unknown)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(name: &str, qtype: u16) -> Vec<u8> {
        let mut q = vec![0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0];
        for l in name.split('.') {
            q.push(l.len() as u8);
            q.extend_from_slice(l.as_bytes());
        }
        q.push(0);
        q.extend_from_slice(&qtype.to_be_bytes());
        q.extend_from_slice(&[0, 1]);
        q
    }

    #[test]
    fn known_names_get_their_address_and_others_nxdomain() {
        let names = vec![("api".to_string(), [10, 0, 2, 2])];
        let (a, o) = answer(&query("API", 1), &names).unwrap();
        assert_eq!(o, Outcome::Known);
        assert_eq!(&a[..4], &[0x12, 0x34, 0x85, 0x00], "id, QR|AA|RD, NOERROR");
        assert_eq!(&a[6..8], &[0, 1], "one answer");
        assert_eq!(&a[a.len() - 4..], &[10, 0, 2, 2]);
        let (aaaa, o) = answer(&query("api", 28), &names).unwrap();
        assert_eq!((o, &aaaa[6..8]), (Outcome::Known, &[0u8, 0][..]));
        let (nx, o) = answer(&query("example.com", 1), &names).unwrap();
        assert_eq!((o, nx[3] & 0x0f), (Outcome::Unknown, 3));
        assert_eq!(
            answer(&query("api", 1)[..14], &names).unwrap().1,
            Outcome::Malformed
        );
        assert!(answer(&[0; 5], &names).is_none());
        let mut reply = query("api", 1);
        reply[2] |= 0x80;
        assert!(
            answer(&reply, &names).is_none(),
            "an answer is not answered"
        );
    }
}
