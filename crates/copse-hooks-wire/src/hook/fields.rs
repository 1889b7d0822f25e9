//! The macro behind the vendor dialects' types: a struct of required fields, optional
//! fields (absent when `None`) and `extra`, which keeps whatever else the payload
//! carries so nothing is lost on the way through.

/// `wire_struct! { /// doc  pub struct Name { required { … } optional { … } } }`
macro_rules! wire_struct {
    (
        $(#[$sm:meta])*
        pub struct $name:ident {
            required { $( $(#[$rm:meta])* $rf:ident : $rt:ty, )* }
            optional { $( $(#[$om:meta])* $of:ident : $ot:ty, )* }
        }
    ) => {
        $(#[$sm])*
        #[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
        pub struct $name {
            $( $(#[$rm])* pub $rf: $rt, )*
            $(
                $(#[$om])*
                #[serde(default, skip_serializing_if = "Option::is_none")]
                pub $of: Option<$ot>,
            )*
            /// Fields this version of the crate does not know, kept as they came.
            #[serde(flatten)]
            pub extra: serde_json::Map<String, serde_json::Value>,
        }
    };
}

pub(crate) use wire_struct;

/// Reads a field that may be present with `null` as `Some(None)` (so it writes back
/// as `null`), and absent as `None`.
pub(crate) fn nullable<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::Deserialize<'de>,
{
    <Option<T> as serde::Deserialize>::deserialize(d).map(Some)
}
