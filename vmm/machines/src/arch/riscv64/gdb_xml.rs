//! The target description gdb reads for a riscv64 machine: the fixed registers of
//! `gdb-target.xml`, and for a hart with the vector extension the vector CSRs and v0-v31,
//! whose size is the machine's VLEN (so the description is built per machine, not fixed).

use std::fmt::Write as _;

use wio_riscv::VectorState;

/// The first vector CSR's register number (after `priv`), then v0.
pub(super) const VCSR0: usize = 94;
/// vstart, vxsat, vxrm, vcsr, vl, vtype, vlenb.
pub(super) const VECTOR_CSRS: [&str; 7] =
    ["vstart", "vxsat", "vxrm", "vcsr", "vl", "vtype", "vlenb"];
/// v0's register number.
pub(super) const V0: usize = VCSR0 + VECTOR_CSRS.len();

/// The description for a hart whose vector registers are `vlenb` bytes (`None`: no V).
pub(super) fn target_xml(vlenb: Option<usize>) -> String {
    let base = include_str!("gdb-target.xml");
    let Some(vlenb) = vlenb else {
        return base.to_string();
    };
    let mut csrs = String::new();
    for (i, name) in VECTOR_CSRS.iter().enumerate() {
        let _ = writeln!(
            csrs,
            "    <reg name=\"{name}\" bitsize=\"64\" type=\"int\" regnum=\"{}\" group=\"vector\"/>",
            VCSR0 + i
        );
    }
    let mut vector = String::from("  <feature name=\"org.gnu.gdb.riscv.vector\">\n");
    for (id, ty, bytes) in [
        ("bytes", "uint8", 1),
        ("shorts", "uint16", 2),
        ("words", "uint32", 4),
        ("longs", "uint64", 8),
        ("quads", "uint128", 16),
    ] {
        let _ = writeln!(
            vector,
            "    <vector id=\"{id}\" type=\"{ty}\" count=\"{}\"/>",
            vlenb / bytes
        );
    }
    vector.push_str("    <union id=\"riscv_vector\">\n");
    for (field, id) in [
        ("b", "bytes"),
        ("s", "shorts"),
        ("w", "words"),
        ("l", "longs"),
        ("q", "quads"),
    ] {
        let _ = writeln!(vector, "      <field name=\"{field}\" type=\"{id}\"/>");
    }
    vector.push_str("    </union>\n");
    for i in 0..32 {
        let _ = writeln!(
            vector,
            "    <reg name=\"v{i}\" bitsize=\"{}\" regnum=\"{}\" type=\"riscv_vector\" group=\"vector\"/>",
            8 * vlenb,
            V0 + i
        );
    }
    vector.push_str("  </feature>\n");
    // The vector CSRs join the CSR feature (after instret); v0-v31 get their own.
    let csr_end = "    <reg name=\"instret\" bitsize=\"64\" type=\"int\" regnum=\"92\"/>\n";
    base.replacen(csr_end, &format!("{csr_end}{csrs}"), 1)
        .replacen("</target>", &format!("{vector}</target>"), 1)
}

/// The vector CSRs in [`VECTOR_CSRS`] order.
pub(super) fn vector_csrs(v: &VectorState) -> Vec<u64> {
    let vxsat = u64::from(v.vxsat);
    let vxrm = u64::from(v.vxrm);
    vec![
        v.vstart,
        vxsat,
        vxrm,
        vxsat | (vxrm << 1),
        v.vl,
        v.vtype,
        u64::from(v.vlenb),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_vector_hart_gets_its_registers_and_others_the_fixed_description() {
        assert_eq!(target_xml(None), include_str!("gdb-target.xml"));
        let xml = target_xml(Some(64));
        assert!(xml.contains("<reg name=\"vlenb\" bitsize=\"64\" type=\"int\" regnum=\"100\""));
        assert!(xml.contains("<reg name=\"v31\" bitsize=\"512\" regnum=\"132\""));
        assert!(xml.contains("<vector id=\"quads\" type=\"uint128\" count=\"4\"/>"));
        assert!(xml.find("vlenb").unwrap() < xml.find("org.gnu.gdb.riscv.virtual").unwrap());
        assert!(xml.trim_end().ends_with("</target>"));
    }
}
