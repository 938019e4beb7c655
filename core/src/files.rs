//! What a path names, in words, for messages about files that are not what they should be.

use std::fs::{FileType, Metadata};
use std::os::unix::fs::FileTypeExt;
use std::path::Path;

/// "a regular file", "a directory", "a character device", "a block device", "a FIFO",
/// "a socket" or "a symbolic link".
pub fn kind(file_type: FileType) -> &'static str {
    if file_type.is_file() {
        "a regular file"
    } else if file_type.is_dir() {
        "a directory"
    } else if file_type.is_char_device() {
        "a character device"
    } else if file_type.is_block_device() {
        "a block device"
    } else if file_type.is_fifo() {
        "a FIFO"
    } else if file_type.is_socket() {
        "a socket"
    } else if file_type.is_symlink() {
        "a symbolic link"
    } else {
        "not a regular file"
    }
}

/// `"'<path>' is a character device, not a regular file"` (or whatever it is).
pub fn not_regular(shown: &str, meta: &Metadata) -> String {
    format!(
        "'{shown}' is {}, not a regular file",
        kind(meta.file_type())
    )
}

/// The path as the dynamic loader must be given it: absolute, so that `dlopen` never searches
/// the system library paths for a bare file name (`libx.so` found in the current directory would
/// otherwise be looked up in `/usr/lib`, not here). Symbolic links are kept, not resolved.
pub fn absolute(path: &Path) -> std::path::PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_and_directories_are_named() {
        let meta = |p: &str| std::fs::metadata(p).unwrap();
        assert_eq!(
            not_regular("/dev/zero", &meta("/dev/zero")),
            "'/dev/zero' is a character device, not a regular file"
        );
        assert_eq!(kind(meta("/tmp").file_type()), "a directory");
        let file = tempfile::NamedTempFile::new().unwrap();
        assert_eq!(
            kind(meta(file.path().to_str().unwrap()).file_type()),
            "a regular file"
        );
    }

    #[test]
    fn a_bare_name_becomes_a_path_in_the_current_directory() {
        let cwd = std::env::current_dir().unwrap();
        assert_eq!(absolute(Path::new("libx.so")), cwd.join("libx.so"));
        assert_eq!(absolute(Path::new("/a/libx.so")), Path::new("/a/libx.so"));
    }
}
