//! The C extension: expands each 16-bit instruction to its 32-bit equivalent,
//! so the executor implements every operation once.

fn r(rd: u32, rs1: u32, rs2: u32, funct3: u32, funct7: u32, op: u32) -> u32 {
    (funct7 << 25) | (rs2 << 20) | (rs1 << 15) | (funct3 << 12) | (rd << 7) | op
}

fn i(rd: u32, rs1: u32, imm: i32, funct3: u32, op: u32) -> u32 {
    ((imm as u32 & 0xfff) << 20) | (rs1 << 15) | (funct3 << 12) | (rd << 7) | op
}

fn s(rs1: u32, rs2: u32, imm: i32, funct3: u32, op: u32) -> u32 {
    let imm = imm as u32;
    (((imm >> 5) & 0x7f) << 25)
        | (rs2 << 20)
        | (rs1 << 15)
        | (funct3 << 12)
        | ((imm & 0x1f) << 7)
        | op
}

fn b(rs1: u32, rs2: u32, imm: i32, funct3: u32) -> u32 {
    let imm = imm as u32;
    (((imm >> 12) & 1) << 31)
        | (((imm >> 5) & 0x3f) << 25)
        | (rs2 << 20)
        | (rs1 << 15)
        | (funct3 << 12)
        | (((imm >> 1) & 0xf) << 8)
        | (((imm >> 11) & 1) << 7)
        | 0x63
}

fn j(rd: u32, imm: i32) -> u32 {
    let imm = imm as u32;
    (((imm >> 20) & 1) << 31)
        | (((imm >> 1) & 0x3ff) << 21)
        | (((imm >> 11) & 1) << 20)
        | (((imm >> 12) & 0xff) << 12)
        | (rd << 7)
        | 0x6f
}

fn bits(x: u32, hi: u32, lo: u32) -> u32 {
    (x >> lo) & ((1 << (hi - lo + 1)) - 1)
}

fn sext(x: u32, width: u32) -> i32 {
    ((x << (32 - width)) as i32) >> (32 - width)
}

/// Expands a 16-bit instruction; `None` means illegal.
pub fn expand(c: u16) -> Option<u32> {
    let c = u32::from(c);
    let op = c & 3;
    let funct3 = c >> 13;
    let rd = bits(c, 11, 7);
    let rs2 = bits(c, 6, 2);
    let rdp = bits(c, 4, 2) + 8;
    let rs1p = bits(c, 9, 7) + 8;
    match (op, funct3) {
        (0, 0) => {
            // C.ADDI4SPN
            let imm = (bits(c, 10, 7) << 6)
                | (bits(c, 12, 11) << 4)
                | (bits(c, 5, 5) << 3)
                | (bits(c, 6, 6) << 2);
            if imm == 0 {
                return None;
            }
            Some(i(rdp, 2, imm as i32, 0, 0x13))
        }
        (0, 1) => Some(i(
            rdp,
            rs1p,
            ((bits(c, 12, 10) << 3) | (bits(c, 6, 5) << 6)) as i32,
            3,
            0x07,
        )), // C.FLD
        (0, 2) => Some(i(
            rdp,
            rs1p,
            ((bits(c, 12, 10) << 3) | (bits(c, 6, 6) << 2) | (bits(c, 5, 5) << 6)) as i32,
            2,
            0x03,
        )), // C.LW
        (0, 3) => Some(i(
            rdp,
            rs1p,
            ((bits(c, 12, 10) << 3) | (bits(c, 6, 5) << 6)) as i32,
            3,
            0x03,
        )), // C.LD
        (0, 5) => Some(s(
            rs1p,
            rdp,
            ((bits(c, 12, 10) << 3) | (bits(c, 6, 5) << 6)) as i32,
            3,
            0x27,
        )), // C.FSD
        (0, 6) => Some(s(
            rs1p,
            rdp,
            ((bits(c, 12, 10) << 3) | (bits(c, 6, 6) << 2) | (bits(c, 5, 5) << 6)) as i32,
            2,
            0x23,
        )), // C.SW
        (0, 7) => Some(s(
            rs1p,
            rdp,
            ((bits(c, 12, 10) << 3) | (bits(c, 6, 5) << 6)) as i32,
            3,
            0x23,
        )), // C.SD
        (1, 0) => Some(i(
            rd,
            rd,
            sext((bits(c, 12, 12) << 5) | bits(c, 6, 2), 6),
            0,
            0x13,
        )), // C.ADDI / C.NOP
        (1, 1) => {
            // C.ADDIW
            if rd == 0 {
                return None;
            }
            Some(i(
                rd,
                rd,
                sext((bits(c, 12, 12) << 5) | bits(c, 6, 2), 6),
                0,
                0x1b,
            ))
        }
        (1, 2) => Some(i(
            rd,
            0,
            sext((bits(c, 12, 12) << 5) | bits(c, 6, 2), 6),
            0,
            0x13,
        )), // C.LI
        (1, 3) => {
            if rd == 2 {
                // C.ADDI16SP
                let imm = (bits(c, 12, 12) << 9)
                    | (bits(c, 4, 3) << 7)
                    | (bits(c, 5, 5) << 6)
                    | (bits(c, 2, 2) << 5)
                    | (bits(c, 6, 6) << 4);
                if imm == 0 {
                    return None;
                }
                Some(i(2, 2, sext(imm, 10), 0, 0x13))
            } else {
                // C.LUI
                let imm = sext((bits(c, 12, 12) << 5) | bits(c, 6, 2), 6);
                if imm == 0 {
                    return None;
                }
                Some(((imm as u32) << 12) | (rd << 7) | 0x37)
            }
        }
        (1, 4) => {
            let shamt = (bits(c, 12, 12) << 5) | bits(c, 6, 2);
            match bits(c, 11, 10) {
                0 => Some(i(rs1p, rs1p, shamt as i32, 5, 0x13)), // C.SRLI
                1 => Some(i(rs1p, rs1p, (shamt | 0x400) as i32, 5, 0x13)), // C.SRAI
                2 => Some(i(
                    rs1p,
                    rs1p,
                    sext((bits(c, 12, 12) << 5) | bits(c, 6, 2), 6),
                    7,
                    0x13,
                )), // C.ANDI
                _ => {
                    let rs2p = rdp;
                    match (bits(c, 12, 12), bits(c, 6, 5)) {
                        (0, 0) => Some(r(rs1p, rs1p, rs2p, 0, 0x20, 0x33)), // C.SUB
                        (0, 1) => Some(r(rs1p, rs1p, rs2p, 4, 0, 0x33)),    // C.XOR
                        (0, 2) => Some(r(rs1p, rs1p, rs2p, 6, 0, 0x33)),    // C.OR
                        (0, 3) => Some(r(rs1p, rs1p, rs2p, 7, 0, 0x33)),    // C.AND
                        (1, 0) => Some(r(rs1p, rs1p, rs2p, 0, 0x20, 0x3b)), // C.SUBW
                        (1, 1) => Some(r(rs1p, rs1p, rs2p, 0, 0, 0x3b)),    // C.ADDW
                        _ => None,
                    }
                }
            }
        }
        (1, 5) => {
            // C.J
            let imm = (bits(c, 12, 12) << 11)
                | (bits(c, 8, 8) << 10)
                | (bits(c, 10, 9) << 8)
                | (bits(c, 6, 6) << 7)
                | (bits(c, 7, 7) << 6)
                | (bits(c, 2, 2) << 5)
                | (bits(c, 11, 11) << 4)
                | (bits(c, 5, 3) << 1);
            Some(j(0, sext(imm, 12)))
        }
        (1, 6) | (1, 7) => {
            // C.BEQZ / C.BNEZ
            let imm = (bits(c, 12, 12) << 8)
                | (bits(c, 6, 5) << 6)
                | (bits(c, 2, 2) << 5)
                | (bits(c, 11, 10) << 3)
                | (bits(c, 4, 3) << 1);
            Some(b(rs1p, 0, sext(imm, 9), funct3 - 6))
        }
        (2, 0) => Some(i(
            rd,
            rd,
            ((bits(c, 12, 12) << 5) | bits(c, 6, 2)) as i32,
            1,
            0x13,
        )), // C.SLLI
        (2, 1) => Some(i(
            rd,
            2,
            ((bits(c, 12, 12) << 5) | (bits(c, 6, 5) << 3) | (bits(c, 4, 2) << 6)) as i32,
            3,
            0x07,
        )), // C.FLDSP
        (2, 2) => {
            if rd == 0 {
                return None;
            }
            Some(i(
                rd,
                2,
                ((bits(c, 12, 12) << 5) | (bits(c, 6, 4) << 2) | (bits(c, 3, 2) << 6)) as i32,
                2,
                0x03,
            )) // C.LWSP
        }
        (2, 3) => {
            if rd == 0 {
                return None;
            }
            Some(i(
                rd,
                2,
                ((bits(c, 12, 12) << 5) | (bits(c, 6, 5) << 3) | (bits(c, 4, 2) << 6)) as i32,
                3,
                0x03,
            )) // C.LDSP
        }
        (2, 4) => match (bits(c, 12, 12), rd, rs2) {
            (0, 0, 0) => None,
            (0, rs1, 0) => Some(i(0, rs1, 0, 0, 0x67)), // C.JR
            (0, rd, rs2) => Some(r(rd, 0, rs2, 0, 0, 0x33)), // C.MV
            (_, 0, 0) => Some(0x0010_0073),             // C.EBREAK
            (_, rs1, 0) => Some(i(1, rs1, 0, 0, 0x67)), // C.JALR
            (_, rd, rs2) => Some(r(rd, rd, rs2, 0, 0, 0x33)), // C.ADD
        },
        (2, 5) => Some(s(
            2,
            rs2,
            ((bits(c, 12, 10) << 3) | (bits(c, 9, 7) << 6)) as i32,
            3,
            0x27,
        )), // C.FSDSP
        (2, 6) => Some(s(
            2,
            rs2,
            ((bits(c, 12, 9) << 2) | (bits(c, 8, 7) << 6)) as i32,
            2,
            0x23,
        )), // C.SWSP
        (2, 7) => Some(s(
            2,
            rs2,
            ((bits(c, 12, 10) << 3) | (bits(c, 9, 7) << 6)) as i32,
            3,
            0x23,
        )), // C.SDSP
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_expansions() {
        // c.li a0, 1 -> addi a0, zero, 1
        assert_eq!(expand(0x4505), Some(0x0010_0513));
        // c.addi sp, -16 -> addi sp, sp, -16
        assert_eq!(expand(0x1141), Some(0xff01_0113));
        // c.sd ra, 8(sp) (c.sdsp) -> sd ra, 8(sp)
        assert_eq!(expand(0xe406), Some(0x0011_3423));
        // c.ld ra, 8(sp) (c.ldsp) -> ld ra, 8(sp)
        assert_eq!(expand(0x60a2), Some(0x0081_3083));
        // c.ret -> jalr zero, 0(ra)
        assert_eq!(expand(0x8082), Some(0x0000_8067));
        // c.mv a0, a1 -> add a0, zero, a1
        assert_eq!(expand(0x852e), Some(0x00b0_0533));
        // c.j . (offset 0)
        assert_eq!(expand(0xa001), Some(0x0000_006f));
        // c.beqz a0, +8 -> beq a0, zero, 8
        assert_eq!(expand(0xc501), Some(0x0005_0463));
        // c.addi4spn a0, sp, 16 -> addi a0, sp, 16
        assert_eq!(expand(0x0808), Some(0x0101_0513));
        // c.lw a0, 0(a1)
        assert_eq!(expand(0x4188), Some(0x0005_a503));
        // c.ebreak
        assert_eq!(expand(0x9002), Some(0x0010_0073));
        // c.srai a0, 3
        assert_eq!(expand(0x850d), Some(0x4035_5513));
    }

    #[test]
    fn illegal_encodings() {
        assert_eq!(expand(0x0000), None); // all zeros is defined illegal
        assert_eq!(expand(0x8002), None); // c.jr with rs1 = 0
        assert_eq!(expand(0x6101), None); // c.addi16sp with imm 0
    }
}
