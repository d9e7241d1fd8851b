//! Delta filter (XOR against block 0). (Stub: being implemented.)
