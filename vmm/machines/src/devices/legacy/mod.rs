//! The x86 PC platform devices: 8259 PIC pair, 8254 PIT, CMOS RTC, COM1
//! 8250 UART, i8042 reset line, the ACPI PM1a blocks, the debug-exit port and wio's
//! paravirt clock port.
//!
//! None of them reads host time: each is handed the virtual time of the
//! access, so what the guest sees is a function of the run's seed and inputs.

pub mod acpi_pm;
pub mod debug_exit;
pub mod i8042;
pub mod paravirt;
pub mod pic;
pub mod pit;
pub mod rtc;
pub mod serial;
