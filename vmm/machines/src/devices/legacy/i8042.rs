//! The i8042 keyboard controller, reduced to what a guest without a keyboard
//! uses: status reads, and command 0xfe (pulse the CPU reset line), which ends
//! the run as a guest reset.

/// Data port.
pub const DATA_PORT: u16 = 0x60;
/// Command/status port.
pub const COMMAND_PORT: u16 = 0x64;
const CMD_RESET_CPU: u8 = 0xfe;

/// The i8042 controller.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct I8042 {
    reset_requested: bool,
}

impl I8042 {
    /// Whether `port` belongs to the controller.
    pub fn handles(port: u16) -> bool {
        port == DATA_PORT || port == COMMAND_PORT
    }

    /// Port read: no data, input buffer empty.
    pub fn read(&mut self, _port: u16) -> u8 {
        0
    }

    /// Port write; the reset command sets the reset request.
    pub fn write(&mut self, port: u16, value: u8) {
        if port == COMMAND_PORT && value == CMD_RESET_CPU {
            self.reset_requested = true;
        }
    }

    /// Whether the guest pulsed the reset line.
    pub fn reset_requested(&self) -> bool {
        self.reset_requested
    }
}

// The controller is one flag.
crate::persist_registers!(I8042);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reset_command_is_latched() {
        let mut k = I8042::default();
        k.write(DATA_PORT, CMD_RESET_CPU);
        assert!(!k.reset_requested());
        k.write(COMMAND_PORT, CMD_RESET_CPU);
        assert!(k.reset_requested());
    }
}
