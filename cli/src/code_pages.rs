//! Drops the program's resident code pages once a model is loaded, so that only the code that
//! prompts and generation run comes back (issue 16's peak RSS).
//!
//! Starting up and loading run code that generation never runs again: argument parsing, the
//! GGUF and JSON parsers, the tokenizer's builders, the model's assembly, the progress bar, the
//! dynamic linker's relocation tables. The kernel maps a program's file pages in 64 KiB windows
//! around each page it touches (fault-around), so that code, its read-only data and their
//! neighbours stay resident for the whole run — with the code generation needs, ~5 MB of this
//! binary and ~1.5 MB of its libraries on the default model, the largest share of the peak
//! resident set after the weights and the KV cache (docs/BENCHMARKS.md, "rss29").
//!
//! `MADV_DONTNEED` on a file mapping whose pages were never written only unmaps them: nothing
//! is lost, and the next use of a dropped page maps it again from the page cache (a minor
//! fault; the file stays cached). So only read-only mappings of the program and its shared
//! libraries that hold no private (written) page are dropped: a written private page — the
//! relocated pointers of a RELRO segment, made read-only after the dynamic linker wrote them —
//! would be lost, and those mappings count `Anonymous` pages in `/proc/self/smaps`. Writable
//! mappings, the heap, stacks and the model's own mapped weights are never touched.

/// Whether a mapping's permissions and path let it be dropped: read-only, of `exe` or a shared
/// library (its private pages are checked apart).
fn droppable(perms: &str, path: &str, exe: &str) -> bool {
    let p = perms.as_bytes();
    let read_only = p.len() >= 2 && p[0] == b'r' && p[1] == b'-';
    let file = path.starts_with('/') && (path == exe || path.rsplit('/').next().is_some_and(|name| name.contains(".so")));
    read_only && file
}

/// The start and end of each mapping in `smaps` (the text of `/proc/self/smaps`) that is
/// [`droppable`] and has no page in swap either (a swapped-out private page is private too).
fn ranges_to_drop(smaps: &str, exe: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    // The current mapping: its range, whether its permissions and path qualify, and its
    // private pages (kB, `Anonymous:` plus `Swap:`) so far.
    let mut current: Option<(usize, usize, bool, u64)> = None;
    let mut finish = |m: Option<(usize, usize, bool, u64)>| {
        if let Some((start, end, true, 0)) = m {
            out.push((start, end));
        }
    };
    for line in smaps.lines() {
        let mut fields = line.split_whitespace();
        let Some(first) = fields.next() else { continue };
        if let Some((start, end)) = first.split_once('-').filter(|_| !first.ends_with(':')) {
            finish(current.take());
            // A mapping's header: range, permissions, offset, device, inode, path.
            let perms = fields.next().unwrap_or("");
            let path = fields.nth(3).unwrap_or("");
            if let (Ok(s), Ok(e)) = (usize::from_str_radix(start, 16), usize::from_str_radix(end, 16)) {
                // No `Anonymous:` line seen yet counts as private, so an unreadable entry stays.
                current = Some((s, e, droppable(perms, path, exe), 1));
            }
        } else if let Some(m) = current.as_mut() {
            let kb = || fields.clone().next().and_then(|n| n.parse::<u64>().ok()).unwrap_or(u64::MAX);
            match first {
                "Anonymous:" => m.3 = m.3.saturating_sub(1).saturating_add(kb()),
                "Swap:" => m.3 = m.3.saturating_add(kb()),
                _ => {}
            }
        }
    }
    finish(current.take());
    out
}

/// Unmaps the resident pages of the program's and its libraries' never-written read-only
/// mappings (see the module's text); they come back as they are used. Does nothing if /proc
/// cannot be read.
pub fn drop_resident_code() {
    let Ok(smaps) = std::fs::read_to_string("/proc/self/smaps") else { return };
    let exe = std::fs::read_link("/proc/self/exe").map(|p| p.to_string_lossy().into_owned()).unwrap_or_default();
    for (start, end) in ranges_to_drop(&smaps, &exe) {
        // SAFETY: the range is one whole read-only file mapping with no private page (checked
        // just now; nothing in this process makes such a mapping writable again): dropping
        // its pages discards nothing that the file does not hold, and no address becomes
        // invalid.
        unsafe {
            libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_DONTNEED);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only read-only mappings of the program or a shared library without private pages.
    #[test]
    fn picks_only_unwritten_read_only_program_and_library_mappings() {
        let smaps = "\
5555a000-5555b000 r--p 00000000 fd:00 123 /usr/bin/mlx-arm
Rss:                   4 kB
Anonymous:             0 kB
Swap:                  0 kB
5555b000-5555f000 r-xp 00001000 fd:00 123 /usr/bin/mlx-arm
Anonymous:             0 kB
5555f000-55560000 r--p 00005000 fd:00 123 /usr/bin/mlx-arm
Anonymous:             4 kB
55560000-55561000 rw-p 00006000 fd:00 123 /usr/bin/mlx-arm
Anonymous:             0 kB
55561000-55580000 rw-p 00000000 00:00 0 [heap]
Anonymous:             0 kB
7e0000000000-7e0000100000 r--p 00000000 fd:00 5 /models/m.gguf
Anonymous:             0 kB
7f0000000000-7f0000010000 r-xp 00000000 00:00 0
Anonymous:             0 kB
7f0000020000-7f0000030000 r-xp 00002000 fd:00 77 /usr/lib/libc.so.6
Anonymous:             0 kB
7f0000030000-7f0000040000 r--p 00012000 fd:00 77 /usr/lib/libc.so.6
Anonymous:             0 kB
Swap:                  8 kB
7f0000040000-7f0000050000 r--p 00022000 fd:00 77 /usr/lib/libc.so.6
7fff0000-7fff2000 r-xp 00000000 00:00 0 [vdso]
Anonymous:             0 kB
";
        assert_eq!(
            ranges_to_drop(smaps, "/usr/bin/mlx-arm"),
            vec![(0x5555a000, 0x5555b000), (0x5555b000, 0x5555f000), (0x7f0000020000, 0x7f0000030000)]
        );
    }

    /// After the drop the process still runs its code (the pages come back), and the text
    /// mapping of this test binary holds fewer resident pages than before.
    #[test]
    #[cfg(target_os = "linux")]
    fn dropped_code_comes_back() {
        fn code_rss_kb() -> u64 {
            let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
            let mut code = false;
            let mut kb = 0;
            for line in smaps.lines() {
                let f: Vec<&str> = line.split_whitespace().collect();
                if f.first().is_some_and(|r| r.contains('-') && !r.ends_with(':')) {
                    code = f.get(1).is_some_and(|p| p.starts_with("r-x")) && f.get(5).is_some_and(|p| p.starts_with('/'));
                } else if code && f.first() == Some(&"Rss:") {
                    kb += f[1].parse::<u64>().unwrap();
                }
            }
            kb
        }
        let before = code_rss_kb();
        drop_resident_code();
        let after = code_rss_kb();
        assert!(before > 0 && after < before, "code RSS {before} kB -> {after} kB");
        // Code runs again from the dropped pages.
        assert_eq!(format!("{}", 6 * 7), "42");
    }
}
