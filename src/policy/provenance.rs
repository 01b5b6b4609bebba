//! Where a generated file comes from: the source's path, its exact text (hashed into the header
//! as a git blob id and a SHA-256), and the command that regenerates the file. One type for
//! every generator (`proofs/`, `src/generated/`).

use sha2::Digest;

/// The source of a generated file, for its provenance header.
pub struct Provenance<'a> {
    /// The source's path as shown to users (relative to the repository root).
    pub path: &'a str,
    /// The source's exact text, hashed into the header.
    pub text: &'a str,
    /// The command that regenerates the file.
    pub command: &'a str,
}

impl Provenance<'_> {
    /// The git blob id of the source text (`git log --find-object=ID` finds its commits).
    pub fn blob(&self) -> String {
        git_blob_id(self.text)
    }

    /// The SHA-256 of the source text, in hex.
    pub fn sha256(&self) -> String {
        sha256_hex(self.text)
    }
}

/// The id git gives `text` as a blob.
pub fn git_blob_id(text: &str) -> String {
    let mut h = sha1_smol::Sha1::new();
    h.update(format!("blob {}\0", text.len()).as_bytes());
    h.update(text.as_bytes());
    h.digest().to_string()
}

/// The SHA-256 of `text`, in lower-case hex.
pub fn sha256_hex(text: &str) -> String {
    let d = sha2::Sha256::digest(text.as_bytes());
    d.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn hashes() {
        // `printf 'hello\n' | git hash-object --stdin`
        assert_eq!(
            super::git_blob_id("hello\n"),
            "ce013625030ba8dba906f756967f9e9ca394464a"
        );
        // `printf 'hello\n' | sha256sum`
        assert_eq!(
            super::sha256_hex("hello\n"),
            "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"
        );
    }
}
