//! PTX emulator.
