//! Text a compose file holds that is not YAML: command strings split as a shell would,
//! durations, `.env` and `env_file` lines.

use std::collections::BTreeMap;
use std::path::PathBuf;

/// A compose duration (`1m30s`, `10s`, `500ms`, `1h`, `2us`) in ms (at least 10).
pub(super) fn duration_ms(s: &str) -> Option<u64> {
    let mut total_us: u64 = 0;
    let mut rest = s.trim();
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let n: u64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        let unit = rest
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(rest.len());
        let us = match &rest[..unit] {
            "h" => 3_600_000_000,
            "m" => 60_000_000,
            "s" => 1_000_000,
            "ms" => 1_000,
            "us" => 1,
            _ => return None,
        };
        total_us = total_us.checked_add(n.checked_mul(us)?)?;
        rest = &rest[unit..];
    }
    Some((total_us / 1000).max(10))
}

/// `KEY=VALUE` lines (blank lines and `#` comments skipped; one pair of quotes taken off).
pub(super) fn parse_env(text: &str) -> std::result::Result<BTreeMap<String, String>, String> {
    let mut out = BTreeMap::new();
    for (i, l) in text.lines().enumerate() {
        let l = l.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        let l = l.strip_prefix("export ").unwrap_or(l);
        let (k, v) = l
            .split_once('=')
            .ok_or_else(|| format!("line {}: {l:?} is not KEY=VALUE", i + 1))?;
        let v = v.trim();
        let v = v
            .strip_prefix('"')
            .and_then(|x| x.strip_suffix('"'))
            .or_else(|| v.strip_prefix('\'').and_then(|x| x.strip_suffix('\'')))
            .unwrap_or(v);
        out.insert(k.trim().to_string(), v.to_string());
    }
    Ok(out)
}

pub(super) fn read_env_file(p: &PathBuf) -> std::result::Result<Vec<(String, String)>, String> {
    let text = std::fs::read_to_string(p).map_err(|e| e.to_string())?;
    Ok(parse_env(&text)?.into_iter().collect())
}

/// Splits a command string into words as a POSIX shell would (quotes and backslashes),
/// without expanding anything.
pub fn split(s: &str) -> std::result::Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(x) => cur.push(x),
                        None => return Err(format!("an unclosed ' in {s:?}")),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(x @ ('"' | '\\' | '$' | '`')) => cur.push(x),
                            Some(x) => {
                                cur.push('\\');
                                cur.push(x);
                            }
                            None => return Err(format!("an unclosed \" in {s:?}")),
                        },
                        Some(x) => cur.push(x),
                        None => return Err(format!("an unclosed \" in {s:?}")),
                    }
                }
            }
            '\\' => {
                in_word = true;
                if let Some(x) = chars.next() {
                    cur.push(x);
                }
            }
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        words.push(cur);
    }
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_split_as_a_shell_would() {
        assert_eq!(
            split("redis-server --save ''").unwrap(),
            vec!["redis-server", "--save", ""]
        );
        assert_eq!(
            split(r#"sh -c "echo \"hi\" $X""#).unwrap(),
            vec!["sh", "-c", "echo \"hi\" $X"]
        );
        assert_eq!(split(r"a\ b  c").unwrap(), vec!["a b", "c"]);
        assert!(split("'open").is_err());
        assert_eq!(duration_ms("1m30s"), Some(90_000));
        assert_eq!(duration_ms("500ms"), Some(500));
        assert_eq!(duration_ms("1x"), None);
    }
}
