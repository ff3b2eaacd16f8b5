//! The closed word lists of the API (ops, match modes, fits, font policies, the 'Edited'
//! mark, alignments, failure reasons), each written once.
//!
//! [`api_words!`] declares an enum whose variants are the API's words: the enum with its
//! doc comments, `as_str` (each variant's word), `ALL`, and an exported macro that hands
//! the same list, words and doc comments included, to a macro of another crate. The Node
//! addon builds its JS string enums from it (`native/src/enums.rs`), so a word added here
//! reaches `index.d.ts` with nothing written twice. Variants under `internal` never leave
//! the engine: each names the public variant it is reported as.
//!
//! An enum's own doc comment is written `#[doc = "…"]` in an invocation: a `///` comment
//! passed through a macro becomes a raw string, which napi's type generator copies into
//! `index.d.ts` quotes and all.

/// See the module's text.
macro_rules! api_words {
    (
        $d:tt
        $(#[doc = $edoc:tt])*
        pub enum $name:ident (export $export:ident $(, default $def:ident)?) {
            $( $(#[doc = $doc:tt])* $v:ident = $w:literal, )+
        }
        $( internal { $( $(#[doc = $idoc:tt])* $iv:ident = $iw:literal => $ito:ident, )+ } )?
    ) => {
        $(#[doc = $edoc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $( $(#[doc = $doc])* $v, )+
            $( $( $(#[doc = $idoc])* $iv, )+ )?
        }

        impl $name {
            /// Every variant, in declaration order (internal ones last).
            pub const ALL: &'static [$name] = &[$($name::$v,)+ $($($name::$iv,)+)?];

            /// The API word.
            pub fn as_str(self) -> &'static str {
                match self {
                    $( $name::$v => $w, )+
                    $( $( $name::$iv => $iw, )+ )?
                }
            }
        }

        $(
            impl Default for $name {
                fn default() -> Self {
                    $name::$def
                }
            }
        )?

        /// Hands this word list (each variant with its word and doc comments, and the
        /// internal variants with the public variant each is reported as) to the macro
        /// named by the argument.
        #[macro_export]
        macro_rules! $export {
            ($d cb:ident) => {
                $d cb! {
                    $(#[doc = $edoc])*
                    $name { $( $(#[doc = $doc])* $v = $w, )+ }
                    internal { $( $( $iv => $ito, )+ )? }
                }
            };
        }
    };
}

pub(crate) use api_words;
