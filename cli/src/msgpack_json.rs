//! A small msgpack → JSON decoder for showing metalayer contents. Bounded: nesting depth and
//! element counts are checked against the remaining input, so forged lengths fail cleanly.

use serde_json::{json, Value};

const MAX_DEPTH: u32 = 32;

struct Rd<'a> {
    b: &'a [u8],
    p: usize,
}

impl<'a> Rd<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.p.checked_add(n)?;
        let s = self.b.get(self.p..end)?;
        self.p = end;
        Some(s)
    }
    fn be(&mut self, n: usize) -> Option<u64> {
        Some(
            self.take(n)?
                .iter()
                .fold(0u64, |a, &x| (a << 8) | u64::from(x)),
        )
    }
    fn remaining(&self) -> usize {
        self.b.len() - self.p
    }
}

/// Decodes one complete msgpack value filling `buf`; `None` if it is not one.
pub fn decode(buf: &[u8]) -> Option<Value> {
    let mut r = Rd { b: buf, p: 0 };
    let v = value(&mut r, 0)?;
    (r.p == buf.len()).then_some(v)
}

fn bytes_value(s: &[u8]) -> Value {
    match std::str::from_utf8(s) {
        Ok(t) => Value::String(t.to_string()),
        Err(_) => json!({ "bin": hex(s) }),
    }
}

/// Lowercase hex of `b`.
pub fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn seq(r: &mut Rd<'_>, n: usize, depth: u32) -> Option<Value> {
    if n > r.remaining() {
        return None;
    }
    (0..n)
        .map(|_| value(r, depth + 1))
        .collect::<Option<Vec<_>>>()
        .map(Value::Array)
}

fn map(r: &mut Rd<'_>, n: usize, depth: u32) -> Option<Value> {
    if n > r.remaining() / 2 {
        return None;
    }
    let mut m = serde_json::Map::new();
    for _ in 0..n {
        let k = match value(r, depth + 1)? {
            Value::String(s) => s,
            other => other.to_string(),
        };
        m.insert(k, value(r, depth + 1)?);
    }
    Some(Value::Object(m))
}

fn value(r: &mut Rd<'_>, depth: u32) -> Option<Value> {
    if depth > MAX_DEPTH {
        return None;
    }
    let t = r.take(1)?[0];
    Some(match t {
        0x00..=0x7f => json!(t),
        0x80..=0x8f => map(r, usize::from(t & 0x0f), depth)?,
        0x90..=0x9f => seq(r, usize::from(t & 0x0f), depth)?,
        0xa0..=0xbf => bytes_value(r.take(usize::from(t & 0x1f))?),
        0xc0 => Value::Null,
        0xc2 => json!(false),
        0xc3 => json!(true),
        0xc4 | 0xd9 => {
            let n = r.be(1)? as usize;
            let s = r.take(n)?;
            if t == 0xc4 {
                json!({ "bin": hex(s) })
            } else {
                bytes_value(s)
            }
        }
        0xc5 | 0xda => {
            let n = r.be(2)? as usize;
            let s = r.take(n)?;
            if t == 0xc5 {
                json!({ "bin": hex(s) })
            } else {
                bytes_value(s)
            }
        }
        0xc6 | 0xdb => {
            let n = r.be(4)? as usize;
            let s = r.take(n)?;
            if t == 0xc6 {
                json!({ "bin": hex(s) })
            } else {
                bytes_value(s)
            }
        }
        0xca => json!(f32::from_bits(r.be(4)? as u32)),
        0xcb => json!(f64::from_bits(r.be(8)?)),
        0xcc => json!(r.be(1)?),
        0xcd => json!(r.be(2)?),
        0xce => json!(r.be(4)?),
        0xcf => json!(r.be(8)?),
        0xd0 => json!(r.be(1)? as u8 as i8),
        0xd1 => json!(r.be(2)? as u16 as i16),
        0xd2 => json!(r.be(4)? as u32 as i32),
        0xd3 => json!(r.be(8)? as i64),
        0xd4..=0xd8 => {
            let n = 1usize << (t - 0xd4);
            let ty = r.take(1)?[0] as i8;
            json!({ "ext": ty, "data": hex(r.take(n)?) })
        }
        0xc7..=0xc9 => {
            let n = r.be(1 << (t - 0xc7))? as usize;
            let ty = r.take(1)?[0] as i8;
            json!({ "ext": ty, "data": hex(r.take(n)?) })
        }
        0xdc => {
            let n = r.be(2)? as usize;
            seq(r, n, depth)?
        }
        0xdd => {
            let n = r.be(4)? as usize;
            seq(r, n, depth)?
        }
        0xde => {
            let n = r.be(2)? as usize;
            map(r, n, depth)?
        }
        0xdf => {
            let n = r.be(4)? as usize;
            map(r, n, depth)?
        }
        0xe0..=0xff => json!(t as i8),
        0xc1 => return None,
    })
}
