//! The C entry points a bench races, ours and c-blosc2's side by side
//! (`#[macro_use] #[path = "common/api.rs"] mod api;`, next to `mod common` for the reference
//! library).

/// Declares `struct $name` holding C entry points that both libraries export under the same
/// name with the same signature, with `$name::ours()` (this crate's functions, which must be
/// in scope, after `blosc2_init`) and `$name::theirs()` (looked up by name in c-blosc2 3.3.5,
/// the reference library).
macro_rules! c_api {
    ($(#[$m:meta])* struct $name:ident { $($field:ident: $sym:ident as $ty:ty),* $(,)? }) => {
        $(#[$m])*
        #[derive(Clone, Copy)]
        struct $name {
            $($field: $ty),*
        }

        impl $name {
            fn ours() -> $name {
                b2frame::capi::globals::blosc2_init();
                $name {
                    $($field: $sym),*
                }
            }

            fn theirs() -> $name {
                let r = crate::common::reference::reference();
                // SAFETY: each symbol has the C signature c-blosc2 3.3.5's headers declare for
                // it, which is the one ours has (the field's type).
                unsafe {
                    $name {
                        $($field: std::mem::transmute(r.sym(stringify!($sym)))),*
                    }
                }
            }
        }
    };
}
