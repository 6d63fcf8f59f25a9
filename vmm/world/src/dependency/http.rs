//! The HTTP/1.1 a simulated dependency speaks: requests with a `Content-Length` body (or
//! none), answers with a `Content-Length` body and `Connection: close` (one request per
//! connection). Written here rather than taken from a crate because it is small, must
//! never panic on what a guest sends, and must be byte-for-byte the same on every host.

/// Longest request head (request line and headers), bytes.
pub const MAX_HEAD: usize = 16 * 1024;
/// Longest request body, bytes.
pub const MAX_BODY: usize = 1024 * 1024;

/// A request, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// Its method (`GET`, `POST`, ...).
    pub method: String,
    /// Its path, without the query.
    pub path: String,
    /// Its query (after '?'), possibly empty.
    pub query: String,
    /// Its body.
    pub body: Vec<u8>,
}

/// What the bytes of a connection hold so far.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parsed {
    /// Not a whole request yet.
    Partial,
    /// A request (the bytes after it are ignored: one request per connection).
    Request(Request),
    /// Not a request wio answers: the status to answer and why.
    Bad(u16, &'static str),
}

/// Parses the bytes a connection received so far.
pub fn parse(buf: &[u8]) -> Parsed {
    let Some(end) = find(buf, b"\r\n\r\n") else {
        return if buf.len() > MAX_HEAD {
            Parsed::Bad(431, "request head too long")
        } else {
            Parsed::Partial
        };
    };
    if end > MAX_HEAD {
        return Parsed::Bad(431, "request head too long");
    }
    let Ok(head) = std::str::from_utf8(&buf[..end]) else {
        return Parsed::Bad(400, "request head is not UTF-8");
    };
    let mut lines = head.split("\r\n");
    let first = lines.next().unwrap_or("");
    let mut parts = first.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Parsed::Bad(400, "malformed request line");
    };
    if !version.starts_with("HTTP/1.") || method.is_empty() || !target.starts_with('/') {
        return Parsed::Bad(400, "malformed request line");
    }
    let mut length = 0usize;
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            return Parsed::Bad(400, "malformed header");
        };
        let value = value.trim();
        if name.eq_ignore_ascii_case("content-length") {
            match value.parse::<usize>() {
                Ok(n) if n <= MAX_BODY => length = n,
                Ok(_) => return Parsed::Bad(413, "request body too long"),
                Err(_) => return Parsed::Bad(400, "malformed Content-Length"),
            }
        } else if name.eq_ignore_ascii_case("transfer-encoding")
            && !value.eq_ignore_ascii_case("identity")
        {
            return Parsed::Bad(501, "chunked request bodies are not supported");
        }
    }
    let body_start = end + 4;
    if buf.len() < body_start + length {
        return Parsed::Partial;
    }
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    Parsed::Request(Request {
        method: method.to_string(),
        path: path.to_string(),
        query: query.to_string(),
        body: buf[body_start..body_start + length].to_vec(),
    })
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// The reason phrase of `status`.
pub fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        201 => "Created",
        204 => "No Content",
        400 => "Bad Request",
        404 => "Not Found",
        409 => "Conflict",
        413 => "Content Too Large",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "Status",
    }
}

/// An answer's head (status line and headers) for a body of `length` bytes.
pub fn head(status: u16, content_type: &str, length: usize) -> Vec<u8> {
    format!(
        "HTTP/1.1 {status} {}\r\nContent-Type: {content_type}\r\nContent-Length: {length}\r\nConnection: close\r\n\r\n",
        reason(status)
    )
    .into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_parse_and_bad_ones_get_a_status() {
        assert_eq!(parse(b"GET /a HTTP/1.1\r\nHost: x\r\n"), Parsed::Partial);
        let Parsed::Request(r) = parse(b"POST /a/b?x=1 HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc")
        else {
            panic!()
        };
        assert_eq!(
            (r.method.as_str(), r.path.as_str(), r.query.as_str()),
            ("POST", "/a/b", "x=1")
        );
        assert_eq!(r.body, b"abc");
        assert_eq!(
            parse(b"POST /a HTTP/1.1\r\ncontent-length: 5\r\n\r\nab"),
            Parsed::Partial
        );
        for (bytes, status) in [
            (&b"GARBAGE\r\n\r\n"[..], 400),
            (b"GET a HTTP/1.1\r\n\r\n", 400),
            (b"GET /a HTTP/1.1\r\nNoColon\r\n\r\n", 400),
            (b"GET /a HTTP/1.1\r\nContent-Length: x\r\n\r\n", 400),
            (b"GET /a HTTP/1.1\r\nContent-Length: 99999999\r\n\r\n", 413),
            (
                b"GET /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
                501,
            ),
            (b"GET /\xff HTTP/1.1\r\n\r\n", 400),
        ] {
            assert!(
                matches!(parse(bytes), Parsed::Bad(s, _) if s == status),
                "{bytes:?}"
            );
        }
        assert!(matches!(
            parse(&vec![b'a'; MAX_HEAD + 1]),
            Parsed::Bad(431, _)
        ));
    }
}
