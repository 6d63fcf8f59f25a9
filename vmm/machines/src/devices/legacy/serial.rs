//! An 8250/16550 UART (vm-superio): COM1 at ports 0x3f8-0x3ff on IRQ 4 on
//! x86-64, and the memory-mapped NS16550 of the riscv64 machine.
//!
//! Output is collected in a buffer that the machine drains to the console and
//! the trace. There is no input: host keystrokes would break determinism.

use std::cell::Cell;
use std::rc::Rc;
use vm_superio::{Serial, Trigger};

/// Size of the 16550's receive FIFO (vm-superio's, which refuses a longer saved one).
pub const MAX_FIFO_BYTES: usize = 64;

/// First port of COM1.
pub const COM1_BASE: u16 = 0x3f8;
/// COM1's interrupt line.
pub const COM1_IRQ: u8 = 4;

/// Counts interrupt requests from the UART so the machine can raise IRQ 4.
#[derive(Debug, Clone, Default)]
pub struct IrqRequests(Rc<Cell<u32>>);

impl Trigger for IrqRequests {
    type E = std::convert::Infallible;
    fn trigger(&self) -> Result<(), Self::E> {
        self.0.set(self.0.get().saturating_add(1));
        Ok(())
    }
}

/// A UART as a snapshot keeps it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct UartState {
    /// DLL, DLM, IER, IIR, LCR, LSR, MCR, MSR, SCR.
    pub regs: [u8; 9],
    /// Receive FIFO.
    #[serde(with = "serde_bytes")]
    pub in_buffer: Vec<u8>,
    /// Transmitted bytes not yet drained.
    #[serde(with = "serde_bytes")]
    pub output: Vec<u8>,
    /// Interrupt requests not yet taken.
    pub irq_requests: u32,
}

/// A 16550 UART with its output buffer.
pub struct Uart16550 {
    uart: Serial<IrqRequests, vm_superio::serial::NoEvents, Vec<u8>>,
    irq: IrqRequests,
}

impl Default for Uart16550 {
    fn default() -> Self {
        let irq = IrqRequests::default();
        Uart16550 {
            uart: Serial::new(irq.clone(), Vec::new()),
            irq,
        }
    }
}

/// Whether I/O port `port` belongs to COM1.
pub fn com1_handles(port: u16) -> bool {
    (COM1_BASE..COM1_BASE + 8).contains(&port)
}

impl Uart16550 {
    /// Register read at `offset` (0..=7).
    pub fn read(&mut self, offset: u8) -> u8 {
        self.uart.read(offset)
    }

    /// Register write at `offset` (0..=7).
    pub fn write(&mut self, offset: u8, value: u8) {
        // Writing to a Vec cannot fail and the trigger is infallible.
        let _ = self.uart.write(offset, value);
    }

    /// Takes the bytes the guest transmitted since the last call.
    pub fn take_output(&mut self) -> Vec<u8> {
        std::mem::take(self.uart.writer_mut())
    }

    /// Whether the UART asked for an interrupt since the last call (and clears the request).
    pub fn take_irq(&mut self) -> bool {
        self.irq.0.replace(0) > 0
    }
}

/// A snapshot keeps the registers, the receive FIFO and the pending interrupt requests
/// (output is drained at every exit); a restore refuses a FIFO longer than the 16550's.
impl crate::snapshot::persist::Persist for Uart16550 {
    type State = UartState;
    type Args<'a> = ();
    type Error = crate::devices::StateError;

    fn save(&self) -> UartState {
        let s = self.uart.state();
        UartState {
            regs: [
                s.baud_divisor_low,
                s.baud_divisor_high,
                s.interrupt_enable,
                s.interrupt_identification,
                s.line_control,
                s.line_status,
                s.modem_control,
                s.modem_status,
                s.scratch,
            ],
            in_buffer: s.in_buffer,
            output: self.uart.writer().clone(),
            irq_requests: self.irq.0.get(),
        }
    }

    fn restore(_: (), s: &UartState) -> Result<Uart16550, crate::devices::StateError> {
        let [baud_divisor_low, baud_divisor_high, interrupt_enable, interrupt_identification, line_control, line_status, modem_control, modem_status, scratch] =
            s.regs;
        let state = vm_superio::serial::SerialState {
            baud_divisor_low,
            baud_divisor_high,
            interrupt_enable,
            interrupt_identification,
            line_control,
            line_status,
            modem_control,
            modem_status,
            scratch,
            in_buffer: s.in_buffer.clone(),
        };
        let irq = IrqRequests::default();
        irq.0.set(s.irq_requests);
        let uart = Serial::from_state(
            &state,
            irq.clone(),
            vm_superio::serial::NoEvents,
            s.output.clone(),
        )
        // Loading checks one thing only: the receive FIFO fits.
        .map_err(|_| crate::devices::StateError::UartFifo {
            len: s.in_buffer.len(),
            max: MAX_FIFO_BYTES,
        })?;
        Ok(Uart16550 { uart, irq })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transmits_bytes_in_order() {
        let mut com = Uart16550::default();
        for b in b"hi\n" {
            com.write(0, *b);
        }
        assert_eq!(com.take_output(), b"hi\n");
        assert!(com.take_output().is_empty());
        // Line status: transmitter empty.
        assert_ne!(com.read(5) & 0x20, 0);
        assert!(com1_handles(COM1_BASE + 7) && !com1_handles(COM1_BASE + 8));
    }

    #[test]
    fn thr_empty_interrupt_when_enabled() {
        let mut com = Uart16550::default();
        com.write(1, 0x02); // IER: THR empty
        com.write(0, b'x');
        assert!(com.take_irq());
        assert!(!com.take_irq());
    }
}
