//! The `cast` command's job: what every given pattern of one dtype becomes in another, by the
//! reference codec (`numeric::format`), never through the fast kernels' lookup tables, so the
//! table it prints is the definition the kernels are tested against.

use crate::numeric::dtype::float_format;
use crate::numeric::format::{FloatFormat, IntTarget, Source, Value, cast_bits};
use crate::policy::diag::{Diagnostic, LoadError, did_you_mean};

/// Which source patterns [`Cast::table`] converts.
#[derive(Clone, Copy, Debug)]
pub enum Values<'a> {
    /// Every bit pattern of the source (formats of at most 16 bits).
    All,
    /// Raw little-endian storage units, one per element, read from `path` (named in errors).
    Storage { path: &'a str, bytes: &'a [u8] },
}

/// One converted element.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Row {
    pub bits: u64,
    pub value: Value,
    pub to_bits: u64,
    pub to_value: Value,
}

/// What every given pattern of `src` becomes in `dst`, by the reference codec (correctly
/// rounded, never through a lookup table).
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    /// Canonical names.
    pub src: &'static str,
    pub dst: &'static str,
    /// Storage unit sizes in bytes.
    pub src_bytes: u32,
    pub dst_bytes: u32,
    pub rows: Vec<Row>,
}

/// A validated cast: a source the codec decodes and a destination it encodes.
#[derive(Clone, Debug)]
pub struct Cast {
    src_name: &'static str,
    dst_name: &'static str,
    src: Source,
    dst: Target,
}

impl Cast {
    /// The cast from `src` to `dst` (names or short codes), or an error that says what to pass
    /// instead: an unknown dtype (with the nearest name) or an unsupported source or
    /// destination.
    pub fn new(src: &str, dst: &str) -> Result<Cast, LoadError> {
        let resolve = |n: &str| -> Result<&'static str, LoadError> {
            crate::numeric::dtype::canonical(n).ok_or_else(|| {
                let names = crate::numeric::dtype::CATALOGUE.iter().map(|d| d.name);
                let help = did_you_mean(n, names)
                    .map_or("use a catalogue name (docs/file-formats.md)".into(), |s| {
                        format!("did you mean `{s}`?")
                    });
                usage(format!("unknown dtype `{n}`"), &help)
            })
        };
        let (src_name, dst_name) = (resolve(src)?, resolve(dst)?);
        let src = Source::named(src_name).ok_or_else(|| {
            usage(
                format!("`{src_name}` cannot be a cast source"),
                "sources are float formats, integers and bool",
            )
        })?;
        let dst = match (float_format(dst_name), IntTarget::named(dst_name)) {
            (Some(f), _) => Target::Float(f),
            (None, Some(t)) => Target::Int(t),
            (None, None) => {
                return Err(usage(
                    format!("casts to `{dst_name}` are not supported"),
                    "destinations are float formats, integers and bool",
                ));
            }
        };
        Ok(Cast {
            src_name,
            dst_name,
            src,
            dst,
        })
    }

    /// Converts `values` by the reference codec. Errors: `--all` over more than 16 bits, or
    /// storage that is not a whole number of units.
    pub fn table(&self, values: Values) -> Result<Table, LoadError> {
        let (s, d, src_name) = (&self.src, &self.dst, self.src_name);
        let inputs: Vec<u64> = match values {
            Values::All if s.width() > 16 => {
                return Err(usage(
                    format!(
                        "`{src_name}` has {} bits: too many patterns for --all",
                        s.width()
                    ),
                    "pass the values with --bits FILE",
                ));
            }
            Values::All => (0..1u64 << s.width()).collect(),
            Values::Storage { path, bytes } => {
                let w = s.storage_bytes() as usize;
                if bytes.len() % w != 0 {
                    return Err(LoadError::one(
                        Diagnostic::file(
                            path,
                            format!(
                                "{} bytes is not a whole number of {w}-byte `{src_name}` elements",
                                bytes.len()
                            ),
                        )
                        .with_help(
                            "the file must hold raw little-endian storage units, one per element",
                        ),
                    ));
                }
                let units: Vec<u64> = bytes
                    .chunks_exact(w)
                    .map(|c| c.iter().rev().fold(0u64, |acc, &b| acc << 8 | b as u64))
                    .collect();
                // Sub-byte formats and bool use the low bits of their unit; a set high bit is
                // no pattern of the format (the runner refuses it too), never masked away.
                let width = s.width();
                if width < 64
                    && let Some((i, x)) = units.iter().enumerate().find(|(_, x)| *x >> width != 0)
                {
                    return Err(LoadError::one(
                        Diagnostic::file(
                            path,
                            format!(
                                "element {i} (byte offset {}) is {x:#04x}, but `{src_name}` patterns have {width} bit{}",
                                i * w,
                                if width == 1 { "" } else { "s" }
                            ),
                        )
                        .with_help(if src_name == "bool" {
                            "bool storage is 0 or 1 (NumPy reads any other byte as True: normalise with `!= 0` first)"
                        } else {
                            "sub-byte elements take the low bits of one byte each, as ml_dtypes stores them"
                        }),
                    ));
                }
                units
            }
        };
        let rows = inputs
            .into_iter()
            .map(|x| {
                let y = match (s, d) {
                    (Source::Float(f), Target::Float(d)) => cast_bits(f, d, x),
                    (Source::Int { .. }, Target::Float(d)) => d.encode(s.decode(x)),
                    (_, Target::Int(t)) => t.convert(s, x),
                };
                Row {
                    bits: x,
                    value: s.decode(x),
                    to_bits: y,
                    to_value: d.decode(y),
                }
            })
            .collect();
        Ok(Table {
            src: self.src_name,
            dst: self.dst_name,
            src_bytes: s.storage_bytes(),
            dst_bytes: d.storage_bytes(),
            rows,
        })
    }
}

fn usage(msg: String, help: &str) -> LoadError {
    LoadError::one(Diagnostic::file("typejoin cast", msg).with_help(help))
}

/// A cast destination: a float format, or an integer / bool.
#[derive(Clone, Debug)]
enum Target {
    Float(FloatFormat),
    Int(IntTarget),
}

impl Target {
    fn storage_bytes(&self) -> u32 {
        match self {
            Target::Float(f) => f.storage_bytes,
            Target::Int(t) => t.storage_bytes(),
        }
    }

    fn decode(&self, bits: u64) -> Value {
        match self {
            Target::Float(f) => f.decode(bits),
            Target::Int(t) => t.decode(bits),
        }
    }
}
