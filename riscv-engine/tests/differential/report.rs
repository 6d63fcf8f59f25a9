//! Reporting differences: naming slots and values, the differing fields, the program
//! text, and shrinking a failing program to its first diverging instruction.

use super::*;
use std::fmt::Write as _;

pub(crate) fn slot_name(s: usize) -> String {
    match s {
        0 => "trap".to_string(),
        1..=31 => format!("x{s}"),
        32..=63 => format!("f{}", s - 32),
        SLOT_FCSR => "fcsr".to_string(),
        SLOT_TRAP_PC => "trap pc".to_string(),
        SLOT_TRAP_ADDR => "trap addr".to_string(),
        _ => "spare".to_string(),
    }
}

pub(crate) fn fcsr_text(v: u64) -> String {
    let names = ["NX", "UF", "OF", "DZ", "NV"];
    let flags: Vec<&str> = (0..5)
        .rev()
        .filter(|b| v >> b & 1 != 0)
        .map(|b| names[b])
        .collect();
    format!(
        "{v:#x} (frm={} flags={})",
        (v >> 5) & 7,
        if flags.is_empty() {
            "-".to_string()
        } else {
            flags.join("|")
        }
    )
}

pub(crate) fn value_text(s: usize, v: u64) -> String {
    match s {
        SLOT_FCSR => fcsr_text(v),
        0 if v & TRAP_MAGIC == TRAP_MAGIC => {
            let sig = v & 0xff;
            let name = match sig {
                4 => "SIGILL",
                5 => "SIGTRAP",
                7 => "SIGBUS",
                11 => "SIGSEGV",
                _ => "?",
            };
            format!("signal {sig} ({name})")
        }
        0 => "none".to_string(),
        _ => format!("{v:#018x}"),
    }
}

/// Lines "name: qemu=… wio=…" for every difference.
pub(crate) fn diff_lines(q: &[u8], w: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    for s in 0..SLOTS {
        let (a, b) = (u64_at(q, 8 * s), u64_at(w, 8 * s));
        if a != b {
            out.push(format!(
                "{:>5}: qemu={}  wio={}",
                slot_name(s),
                value_text(s, a),
                value_text(s, b)
            ));
        }
    }
    for i in 0..BUF_BYTES / 8 {
        let off = STATE_BYTES + 8 * i;
        let (a, b) = (u64_at(q, off), u64_at(w, off));
        if a != b {
            out.push(format!(
                "mem[buf+{:#05x}]: qemu={a:#018x}  wio={b:#018x}",
                8 * i
            ));
        }
    }
    out
}

pub(crate) fn outcome_text(o: &Outcome) -> String {
    match (&o.qemu, &o.wio) {
        (Ok(q), Ok(w)) => diff_lines(q, w).join("\n    "),
        (q, w) => format!(
            "qemu: {}\n    wio: {}",
            q.as_ref().map_or_else(|e| e.clone(), |_| "ok".into()),
            w.as_ref().map_or_else(|e| e.clone(), |_| "ok".into())
        ),
    }
}

/// The item's encoding as instruction parcels.
pub(crate) fn words_text(b: &[u8]) -> String {
    let mut out = Vec::new();
    let mut i = 0;
    while i + 2 <= b.len() {
        let lo = u16_at(b, i);
        if lo & 3 != 3 {
            out.push(format!("{lo:#06x}"));
            i += 2;
        } else if i + 4 <= b.len() {
            out.push(format!("{:#010x}", u32_at(b, i)));
            i += 4;
        } else {
            break;
        }
    }
    out.join(" ")
}

/// Registers an item names (x<n>, f<n>).
pub(crate) fn regs_named(item: &Item) -> Vec<usize> {
    let mut regs = Vec::new();
    for line in &item.lines {
        for tok in line.split(|c: char| !c.is_ascii_alphanumeric()) {
            let slot = match tok.as_bytes().first() {
                Some(b'x') => tok[1..].parse::<usize>().ok(),
                Some(b'f') => tok[1..].parse::<usize>().ok().map(|n| n + 32),
                _ => None,
            };
            if let Some(s) = slot.filter(|&s| s < 64) {
                if !regs.contains(&s) {
                    regs.push(s);
                }
            }
        }
    }
    regs
}

pub(crate) fn program_text(p: &Program, keep: usize) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "    initial state:");
    for (i, v) in p.x.iter().enumerate().skip(1) {
        let _ = writeln!(out, "      x{i} = {v:#018x}");
    }
    for (i, v) in p.f.iter().enumerate() {
        let _ = writeln!(out, "      f{i} = {v:#018x}");
    }
    let _ = writeln!(out, "      fcsr = {}", fcsr_text(p.fcsr));
    let _ = writeln!(
        out,
        "      (x2 = scratch buffer, x9 = x2 + 256; buffer contents are generated too)"
    );
    let _ = writeln!(out, "    body:");
    for (j, it) in p.items.iter().take(keep).enumerate() {
        let skip = it
            .skip
            .map(|s| format!("   [target: before item {}]", j + 1 + s));
        let _ = writeln!(
            out,
            "      {j:>3}: {}{}",
            it.lines.join("; "),
            skip.unwrap_or_default()
        );
    }
    out
}

pub(crate) struct Finding {
    /// Name of the first diverging item (or a description when it could not be shrunk).
    pub(crate) name: String,
    pub(crate) text: String,
}

/// Finds the first diverging item of failing program `p` and re-checks it alone.
pub(crate) fn shrink(ctx: &Ctx, label: &str, p: &Program, patch: Option<(u32, u32)>) -> Finding {
    let jobs: Vec<Job> = (0..=p.items.len())
        .map(|k| Job {
            tag: format!("s{k}"),
            prog: p,
            keep: k,
        })
        .collect();
    let outs = run_batch(ctx, &jobs, patch);
    let Some(k) = outs.iter().position(Outcome::differs) else {
        return Finding {
            name: "(not reproducible)".into(),
            text: format!("{label}: the mismatch did not reproduce when re-run by prefixes"),
        };
    };
    if k == 0 {
        return Finding {
            name: "(prologue/epilogue)".into(),
            text: format!(
                "{label}: differs with an empty body:\n    {}",
                outcome_text(&outs[0])
            ),
        };
    }
    let item = &p.items[k - 1];
    let before = outs[k - 1]
        .qemu
        .as_ref()
        .expect("prefix ran in qemu")
        .clone();
    let mut text = String::new();
    let _ = writeln!(
        text,
        "{label}: first divergence at item {} of {}: `{}`  [{}]",
        k - 1,
        p.items.len(),
        item.lines.join("; "),
        words_text(&outs[k].last_bytes)
    );
    // The item alone, started from the state just before it.
    let mut single = Program {
        x: [0; 32],
        f: [0; 32],
        fcsr: u64_at(&before, SLOT_FCSR * 8),
        buf: [0; BUF_BYTES / 8],
        items: vec![item.clone()],
        // (A vector item alone starts from zeroed vector registers and no configuration:
        // its re-check is only indicative.)
        vector: p.vector,
    };
    for i in 0..32 {
        single.x[i] = u64_at(&before, 8 * i);
        single.f[i] = u64_at(&before, 8 * (32 + i));
    }
    for (i, w) in single.buf.iter_mut().enumerate() {
        *w = u64_at(&before, STATE_BYTES + 8 * i);
    }
    let alone = run_batch(
        ctx,
        &[Job {
            tag: "one".into(),
            prog: &single,
            keep: 1,
        }],
        patch,
    );
    let _ = writeln!(text, "    state before (registers it names, and fcsr):");
    for s in regs_named(item) {
        let _ = writeln!(
            text,
            "      {:>4} = {}",
            slot_name(s),
            value_text(s, u64_at(&before, 8 * s))
        );
    }
    let _ = writeln!(text, "      fcsr = {}", fcsr_text(single.fcsr));
    if alone[0].differs() {
        let _ = writeln!(
            text,
            "    reproduced alone (one-instruction program from that state); after it:\n    {}",
            outcome_text(&alone[0])
        );
    } else {
        let _ = writeln!(
            text,
            "    NOT reproduced alone; after the prefix:\n    {}\n  prefix program:\n{}",
            outcome_text(&outs[k]),
            program_text(p, k)
        );
    }
    Finding {
        name: item.name.clone(),
        text,
    }
}
