//! libcuda.so.1 over the emulator.
