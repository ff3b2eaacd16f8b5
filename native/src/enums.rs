//! The closed word lists of an edit as JS string enums (the generated `index.d.ts` gives
//! each as a union of its strings), built from the engine's own lists (see the engine's
//! `words` module): each word, its doc comment and the conversions come from one place.

use napi_derive::napi;
use pdfedit_engine::edit as engine;

/// Declares the napi string enum of one engine word list and its conversions (an internal
/// engine variant is converted to the public one it stands for; none converts back to it).
macro_rules! napi_words {
    (
        $(#[doc = $edoc:tt])*
        $name:ident { $( $(#[doc = $doc:tt])* $v:ident = $w:literal, )+ }
        internal { $( $iv:ident => $ito:ident, )* }
    ) => {
        $(#[doc = $edoc])*
        #[napi(string_enum)]
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum $name {
            $( $(#[doc = $doc])* #[napi(value = $w)] $v, )+
        }

        impl From<engine::$name> for $name {
            fn from(x: engine::$name) -> Self {
                match x {
                    $( engine::$name::$v => $name::$v, )+
                    $( engine::$name::$iv => $name::$ito, )*
                }
            }
        }

        impl From<$name> for engine::$name {
            fn from(x: $name) -> Self {
                match x {
                    $( $name::$v => engine::$name::$v, )+
                }
            }
        }
    };
}

pdfedit_engine::edit_ops!(napi_words);
pdfedit_engine::match_modes!(napi_words);
pdfedit_engine::fits!(napi_words);
pdfedit_engine::font_policies!(napi_words);
pdfedit_engine::watermarks!(napi_words);
pdfedit_engine::alignments!(napi_words);
pdfedit_engine::fail_reasons!(napi_words);

/// `scope.occurrence` as a word (a number picks the nth).
#[napi(string_enum = "lowercase")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OccurrenceEnd {
    /// The first match in reading order.
    First,
    /// The last match in reading order.
    Last,
}
