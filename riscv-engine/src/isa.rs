//! Which optional extensions a hart implements beyond RV64GC: the bit-manipulation
//! extensions Zba, Zbb, Zbs and Zbc, and the vector extension V (RVV 1.0, ELEN 64, VLEN
//! 128 to 4096 bits). Off by default, so a machine is RV64GC (and its traces are what
//! they always were) unless its configuration asks for more; on, the device tree
//! advertises them and the hart executes them (see `bitmanip` and `vector`).
//!
//! Parsed once at the edge (`--isa`, a world's `isa =`) from an ISA string such as
//! `rv64gc_zba_zbb_zbs` or `rv64gcv_zvl256b`; the same value then travels with the
//! machine's configuration and its snapshots.

use std::fmt;
use std::str::FromStr;

/// A hart's optional extensions. `Isa::default()` is plain RV64GC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Isa {
    bits: u8,
    /// VLEN in bits when the hart has the vector extension (0: it has not).
    vlen: u16,
}

/// One optional extension wio implements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Extension {
    /// Address generation: `add.uw`, `sh[123]add[.uw]`, `slli.uw`.
    Zba,
    /// Basic bit manipulation: `andn`/`orn`/`xnor`, counts, min/max, sign and zero
    /// extension, rotations, `orc.b`, `rev8`.
    Zbb,
    /// Carry-less multiplication: `clmul`, `clmulh`, `clmulr`.
    Zbc,
    /// Single-bit instructions: `bclr`, `bext`, `binv`, `bset` and their immediate forms.
    Zbs,
}

impl Extension {
    /// Every extension, in the canonical order of an ISA string.
    pub const ALL: [Extension; 4] = [
        Extension::Zba,
        Extension::Zbb,
        Extension::Zbc,
        Extension::Zbs,
    ];

    /// The extension's name in an ISA string.
    pub fn name(self) -> &'static str {
        match self {
            Extension::Zba => "zba",
            Extension::Zbb => "zbb",
            Extension::Zbc => "zbc",
            Extension::Zbs => "zbs",
        }
    }

    fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

/// The base every machine implements, as the device tree spells it.
pub const BASE: &str = "rv64imafdc_zicsr_zifencei";

/// Why an ISA string was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IsaError {
    /// Not an RV64 string.
    #[error("`{0}` is not an RV64 ISA string: it must start with rv64gc (or rv64imafdc), e.g. rv64gc_zba_zbb_zbs, or name a profile: x280")]
    Base(String),
    /// A VLEN the vector unit does not support.
    #[error("VLEN {0} is not supported: zvl<N>b takes a power of two from 128 to 4096 (default 512, as on the SiFive X280)")]
    Vlen(u64),
    /// `zvl<N>b` without `v`.
    #[error("`{0}` sets the vector length, but the ISA has no vector extension: add v (e.g. rv64gcv_{0})")]
    VlenWithoutVector(String),
    /// An embedded vector subset (Zve*).
    #[error("`{0}` is not supported: wio implements the full vector extension (v), not the embedded subsets")]
    VectorSubset(String),
    /// A single-letter extension the base does not name.
    #[error("single-letter extension `{letter}` in `{isa}` is not supported: wio's harts are rv64gc (imafdc)")]
    Letter {
        /// The letter.
        letter: char,
        /// The whole string.
        isa: String,
    },
    /// A multi-letter extension wio does not implement.
    #[error("extension `{name}` is not implemented; wio supports zba, zbb, zbc and zbs beyond rv64gc (zicsr, zifencei are always there)")]
    Unknown {
        /// The extension as written.
        name: String,
    },
}

impl Isa {
    /// Plain RV64GC.
    pub const RV64GC: Isa = Isa { bits: 0, vlen: 0 };

    /// This ISA with `e` added.
    pub const fn with(self, e: Extension) -> Isa {
        Isa {
            bits: self.bits | (1 << e as u8),
            vlen: self.vlen,
        }
    }

    /// VLEN when an ISA string has `v` but no `zvl<N>b`: the X280's.
    pub const DEFAULT_VLEN: u32 = 512;

    /// This ISA with the vector extension at `vlen` bits (a power of two in
    /// [`crate::vector::VLEN_RANGE`]).
    pub fn with_vector(self, vlen: u32) -> Result<Isa, IsaError> {
        if !vlen.is_power_of_two() || !crate::vector::unit::VLEN_RANGE.contains(&vlen) {
            return Err(IsaError::Vlen(u64::from(vlen)));
        }
        Ok(Isa {
            vlen: vlen as u16,
            ..self
        })
    }

    /// VLEN in bits, if the hart has the vector extension.
    pub fn vlen(self) -> Option<u32> {
        (self.vlen != 0).then_some(u32::from(self.vlen))
    }

    /// Whether `e` is implemented.
    #[inline]
    pub fn has(self, e: Extension) -> bool {
        self.bits & e.bit() != 0
    }

    /// The extensions beyond RV64GC, in canonical order.
    pub fn extensions(self) -> impl Iterator<Item = Extension> {
        Extension::ALL.into_iter().filter(move |e| self.has(*e))
    }

    /// Whether this is plain RV64GC.
    pub fn is_base(&self) -> bool {
        self.bits == 0 && self.vlen == 0
    }

    /// The device tree's `riscv,isa` string, e.g. `rv64imafdc_zicsr_zifencei_zba_zbb` (or
    /// `rv64imafdcv_...` with the vector extension).
    pub fn device_tree_string(self) -> String {
        let mut s = BASE.to_string();
        if self.vlen().is_some() {
            s = s.replacen("imafdc", "imafdcv", 1);
        }
        for e in self.extensions() {
            s.push('_');
            s.push_str(e.name());
        }
        s
    }

    /// The device tree's `riscv,isa-extensions` list.
    pub fn device_tree_extensions(self) -> Vec<String> {
        ["i", "m", "a", "f", "d", "c"]
            .iter()
            .map(|s| s.to_string())
            .chain(self.vlen().map(|_| "v".to_string()))
            .chain(["zicsr", "zifencei"].map(String::from))
            .chain(self.extensions().map(|e| e.name().to_string()))
            .collect()
    }
}

impl fmt::Display for Isa {
    /// The canonical short form: `rv64gc` followed by `_zba`, `_zbb`, ... as implemented.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("rv64gc")?;
        if self.vlen().is_some() {
            f.write_str("v")?;
        }
        for e in self.extensions() {
            write!(f, "_{}", e.name())?;
        }
        if let Some(vlen) = self.vlen() {
            write!(f, "_zvl{vlen}b")?;
        }
        Ok(())
    }
}

impl FromStr for Isa {
    type Err = IsaError;

    /// Parses `rv64gc` or `rv64imafdc`, optionally followed by single letters that base
    /// already holds and `v`, then `_`-separated extensions (`zicsr`, `zifencei`, `zba`,
    /// `zbb`, `zbc`, `zbs`, `zvl<N>b` for VLEN = N with `v`, default 512),
    /// case-insensitively. `b` (single letter, or `_b`) is Zba+Zbb+Zbs, as ratified.
    /// `x280` names the SiFive X280's ISA, rv64gcv_zba_zbb (VLEN 512).
    /// Anything else is refused with what wio supports.
    fn from_str(s: &str) -> Result<Isa, IsaError> {
        let lower = s.trim().to_ascii_lowercase();
        if lower == "x280" {
            // SiFive's X280 (the HPSC's cores): RV64GCV at VLEN 512 with Zba and Zbb.
            return "rv64gcv_zba_zbb".parse();
        }
        let mut parts = lower.split('_');
        let head = parts.next().unwrap_or_default();
        let letters = head
            .strip_prefix("rv64")
            .ok_or_else(|| IsaError::Base(s.to_string()))?;
        let letters = letters
            .strip_prefix("gc")
            .or_else(|| letters.strip_prefix("imafdc"))
            .ok_or_else(|| IsaError::Base(s.to_string()))?;
        let b = Isa::RV64GC
            .with(Extension::Zba)
            .with(Extension::Zbb)
            .with(Extension::Zbs);
        let mut isa = Isa::RV64GC;
        let mut vector = false;
        let mut vlen = None;
        for letter in letters.chars() {
            isa = match letter {
                'i' | 'm' | 'a' | 'f' | 'd' | 'c' | 'g' => isa,
                'b' => Isa {
                    bits: isa.bits | b.bits,
                    ..isa
                },
                'v' => {
                    vector = true;
                    isa
                }
                letter => {
                    return Err(IsaError::Letter {
                        letter,
                        isa: s.to_string(),
                    })
                }
            };
        }
        for part in parts {
            isa = match part {
                "" | "zicsr" | "zifencei" => isa,
                "b" => Isa {
                    bits: isa.bits | b.bits,
                    ..isa
                },
                "v" => {
                    vector = true;
                    isa
                }
                name if name.starts_with("zvl") && name.ends_with('b') => {
                    let n =
                        name[3..name.len() - 1]
                            .parse::<u64>()
                            .map_err(|_| IsaError::Unknown {
                                name: name.to_string(),
                            })?;
                    vlen = Some((n, name.to_string()));
                    isa
                }
                name if name.starts_with("zve") => {
                    return Err(IsaError::VectorSubset(name.to_string()))
                }
                name => match Extension::ALL.into_iter().find(|e| e.name() == name) {
                    Some(e) => isa.with(e),
                    None => {
                        return Err(IsaError::Unknown {
                            name: name.to_string(),
                        })
                    }
                },
            };
        }
        match (vector, vlen) {
            (false, Some((_, name))) => Err(IsaError::VlenWithoutVector(name)),
            (false, None) => Ok(isa),
            (true, None) => isa.with_vector(Isa::DEFAULT_VLEN),
            (true, Some((n, _))) => match u32::try_from(n) {
                Ok(n) => isa.with_vector(n),
                Err(_) => Err(IsaError::Vlen(n)),
            },
        }
    }
}

impl serde::Serialize for Isa {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Isa {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Isa, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_parse_into_extensions_and_print_canonically() {
        let x280: Isa = "X280".parse().unwrap();
        assert_eq!(x280.to_string(), "rv64gcv_zba_zbb_zvl512b");
        assert_eq!(x280.vlen(), Some(512));
        let zb: Isa = "rv64gc_zba_zbb_zbs".parse().unwrap();
        assert!(zb.has(Extension::Zba) && zb.has(Extension::Zbb) && zb.has(Extension::Zbs));
        assert!(!zb.has(Extension::Zbc));
        assert_eq!(zb.to_string(), "rv64gc_zba_zbb_zbs");
        assert_eq!("RV64GCB".parse::<Isa>().unwrap(), zb);
        assert_eq!(
            "rv64imafdc_zicsr_zifencei_zbs_zba_zbb".parse::<Isa>(),
            Ok(zb)
        );
        assert_eq!("rv64gc".parse::<Isa>(), Ok(Isa::default()));
        assert_eq!(
            zb.with(Extension::Zbc).device_tree_string(),
            "rv64imafdc_zicsr_zifencei_zba_zbb_zbc_zbs"
        );
        assert_eq!(Isa::default().device_tree_string(), BASE);
        assert_eq!(zb.device_tree_extensions().last().unwrap(), "zbs");
    }

    #[test]
    fn the_vector_extension_takes_its_vlen_from_zvl() {
        let v: Isa = "rv64gcv".parse().unwrap();
        assert_eq!(v.vlen(), Some(512));
        assert_eq!(v.to_string(), "rv64gcv_zvl512b");
        let small: Isa = "rv64gcv_zba_zbb_zbs_zvl128b".parse().unwrap();
        assert_eq!((small.vlen(), small.has(Extension::Zbb)), (Some(128), true));
        assert_eq!(small.to_string().parse::<Isa>(), Ok(small));
        assert_eq!(
            small.device_tree_string(),
            "rv64imafdcv_zicsr_zifencei_zba_zbb_zbs"
        );
        assert!(small.device_tree_extensions().contains(&"v".to_string()));
        assert_eq!("rv64gcv_zvl100b".parse::<Isa>(), Err(IsaError::Vlen(100)));
        assert_eq!("rv64gcv_zvl8192b".parse::<Isa>(), Err(IsaError::Vlen(8192)));
        assert!(matches!(
            "rv64gc_zvl256b".parse::<Isa>(),
            Err(IsaError::VlenWithoutVector(_))
        ));
    }

    #[test]
    fn what_wio_does_not_implement_is_refused_by_name() {
        assert!(matches!(
            "rv64gc_zve64x".parse::<Isa>(),
            Err(IsaError::VectorSubset(_))
        ));
        assert!(matches!("rv32gc".parse::<Isa>(), Err(IsaError::Base(_))));
        assert!(matches!("rv64i".parse::<Isa>(), Err(IsaError::Base(_))));
        assert!(matches!(
            "rv64gch".parse::<Isa>(),
            Err(IsaError::Letter { letter: 'h', .. })
        ));
        let e = "rv64gc_zbkb".parse::<Isa>().unwrap_err();
        assert!(e.to_string().contains("zbkb"), "{e}");
    }
}
