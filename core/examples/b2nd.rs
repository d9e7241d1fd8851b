//! A b2nd array of `f64` in a file: create it, write a slice, reopen it, read a slice, and a
//! view (`squeeze`) that shares the array's data.
//!
//! `cargo run -p blosc2-frame --example b2nd`

use blosc2_frame::b2nd::Array;
use blosc2_frame::chunk::CParams;
use blosc2_frame::Storage;

fn main() -> Result<(), blosc2_frame::Error> {
    let path = std::env::temp_dir().join(format!("b2nd-example-{}.b2nd", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let cparams = CParams::default();

    // 2000 x 2000 items in chunks of 500 x 500, split into blocks of 100 x 100.
    let arr = Array::<f64>::create(
        Storage::file(&path),
        &[2000, 2000],
        &[500, 500],
        &[100, 100],
        &cparams,
    )?;
    let values: Vec<f64> = (0..2000 * 2000).map(|i| i as f64).collect();
    arr.set_slice(&[0..2000, 0..2000], &values)?;
    drop(arr);

    let arr = Array::<f64>::open(&path)?;
    let part: Vec<f64> = arr.slice(&[123..423, 457..757])?;
    assert_eq!(part[0], (123 * 2000 + 457) as f64);
    println!(
        "{:?} array of {}, slice of {} items starting with {}",
        arr.shape(),
        arr.dtype(),
        part.len(),
        part[0]
    );

    // A view: one row as a 1-D array, sharing the file's chunks.
    let row = Array::<f64>::create(Storage::memory_frame(), &[1, 8], &[1, 4], &[1, 2], &cparams)?;
    let view = row.squeeze()?;
    row.set_slice(&[0..1, 0..8], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0])?;
    println!("view {:?}: {:?}", view.shape(), view.to_vec()?);
    assert_eq!(view.get(&[7])?, 8.0);

    drop(arr);
    std::fs::remove_file(&path).map_err(|_| blosc2_frame::Error::FileRemove)?;
    Ok(())
}

// `cargo test -p blosc2-frame --examples` runs the example (and its assertions).
#[cfg(test)]
mod tests {
    #[test]
    fn runs() {
        super::main().unwrap();
    }
}
