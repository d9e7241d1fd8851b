//! Metalayer helpers shared by the header (fixed-size metalayers) and the trailer
//! (vlmetalayers, stored as compressed chunks).

use super::header::MAX_NAME_LEN;
use crate::chunk::{self, CParams};
use crate::error::{Error, Result};

/// Index of `name` in a (name, content) list.
pub fn find(list: &[(String, Vec<u8>)], name: &str) -> Option<usize> {
    list.iter().position(|(n, _)| n == name)
}

/// Names are msgpack fixstrs: 1..=31 bytes.
pub fn check_name(name: &str) -> Result<()> {
    if name.is_empty() || name.len() > MAX_NAME_LEN {
        return Err(Error::InvalidParam);
    }
    Ok(())
}

/// The cparams c-blosc2 uses for a vlmetalayer when none are given
/// (`BLOSC2_CPARAMS_DEFAULTS`: BloscLZ, clevel 5, typesize 8, shuffle).
pub fn default_vlmeta_cparams() -> CParams {
    CParams::default()
}

/// Compresses vlmetalayer content into the chunk that frames store.
pub fn encode_vlmeta(content: &[u8], cparams: Option<&CParams>) -> Result<Vec<u8>> {
    let cp = cparams.copied().unwrap_or_else(default_vlmeta_cparams);
    chunk::compress_vec(&cp, content)
}

/// Decompresses a stored vlmetalayer.
pub fn decode_vlmeta(stored: &[u8]) -> Result<Vec<u8>> {
    chunk::decompress_vec(stored)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_bounded_fixstrs() {
        assert!(check_name("b2nd").is_ok());
        assert!(check_name(&"n".repeat(31)).is_ok());
        assert_eq!(check_name(""), Err(Error::InvalidParam));
        assert_eq!(check_name(&"n".repeat(32)), Err(Error::InvalidParam));
        let l = vec![("a".to_string(), vec![]), ("b".to_string(), vec![1])];
        assert_eq!(find(&l, "b"), Some(1));
        assert_eq!(find(&l, "c"), None);
    }
}
