//! Precision truncation for float32/float64 (lossy, encode only). (Stub: being implemented.)
