//! The two merge loops: rank-ordered BPE (GPT-2 byte-level and Hugging Face `BPE` models) and
//! score-ordered SentencePiece BPE (llama.cpp's `llama` GGUF vocabularies). Both keep the
//! word's symbols in a linked list and candidate pairs in a binary heap, so a long word costs
//! O(n log n) rather than a rescan of every pair after every merge.

use alloc::collections::BinaryHeap;
use alloc::string::String;
use alloc::vec::Vec;
use core::cmp::Reverse;

const NONE: u32 = u32::MAX;

/// Token texts by id, and id lookup by text: the texts concatenated in one string (a 50k-token
/// vocabulary as separate `String`s costs ~2 MB of headers and allocator overhead beside
/// ~0.3 MB of text), ids sorted by their text, searched by binary search (no hashing, so a
/// hostile vocabulary cannot make lookups degrade through collisions). Each entry carries its
/// text's first 4 bytes as a big-endian integer, so most comparisons of a search decide on that
/// key without reading the text (building a 50k-token tokenizer does ~150k lookups; the key
/// costs 4 bytes a token).
pub(crate) struct Vocab {
    all: String,
    /// Where each id's text ends in `all` (it starts where the previous one ends).
    ends: Vec<u32>,
    sorted: Vec<(u32, u32)>,
}

/// The first 4 bytes of `s`, zero-padded, big-endian: ordering two keys orders their texts
/// whenever the keys differ (equal keys need the full comparison).
fn prefix_key(s: &str) -> u32 {
    let mut b = [0u8; 4];
    let n = s.len().min(4);
    b[..n].copy_from_slice(&s.as_bytes()[..n]);
    u32::from_be_bytes(b)
}

impl Vocab {
    /// From the texts by id; `None` when they hold 4 GiB or more together.
    pub(crate) fn new(texts: Vec<String>) -> Option<Vocab> {
        let mut all = String::with_capacity(texts.iter().map(|t| t.len()).sum());
        let mut ends = Vec::with_capacity(texts.len());
        for t in &texts {
            all.push_str(t);
            ends.push(u32::try_from(all.len()).ok()?);
        }
        drop(texts);
        let mut v = Vocab { all, ends, sorted: Vec::new() };
        let mut sorted: Vec<(u32, u32)> = (0..v.len() as u32).map(|i| (prefix_key(v.text(i)), i)).collect();
        sorted.sort_unstable_by(|&(ka, a), &(kb, b)| ka.cmp(&kb).then_with(|| v.text(a).cmp(v.text(b))).then(a.cmp(&b)));
        v.sorted = sorted;
        Some(v)
    }

    /// The text of `id` (empty past the end).
    pub(crate) fn text(&self, id: u32) -> &str {
        let i = id as usize;
        let Some(&end) = self.ends.get(i) else { return "" };
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        // Both ends are boundaries between whole texts, so between UTF-8 characters.
        self.all.get(start as usize..end as usize).unwrap_or("")
    }

    /// The id of `s`; with duplicate texts the largest id wins, as in llama.cpp's map, which
    /// later entries overwrite.
    pub(crate) fn id(&self, s: &str) -> Option<u32> {
        let key = prefix_key(s);
        let p = self.sorted.partition_point(|&(k, id)| k < key || (k == key && self.text(id) <= s));
        let (_, id) = *self.sorted.get(p.checked_sub(1)?)?;
        (self.text(id) == s).then_some(id)
    }

    pub(crate) fn len(&self) -> usize {
        self.ends.len()
    }
}

/// Merge rules by the pair of token ids they join, sorted by pair for binary search: each
/// rule's rank and the token it makes. Where every id and rank is below 2^16 (vocabularies up
/// to 65 536 tokens, as the default model's 49 152 with 48 900 rules) a rule takes 8 bytes
/// (`left << 16 | right`, rank, merged: 0.37 MiB), else 16 — the process keeps these tables
/// for its whole run (issue 16's peak RSS; docs/BENCHMARKS.md, "rss26").
pub(crate) enum Merges {
    Narrow { keys: Vec<u32>, values: Vec<[u16; 2]> },
    Wide { keys: Vec<u64>, values: Vec<[u32; 2]> },
}

impl Merges {
    /// From `(left, right, merged)` in priority order (index = rank). A repeated pair keeps
    /// its first (best) rank.
    pub(crate) fn new(rules: Vec<(u32, u32, u32)>) -> Merges {
        let narrow = rules.len() <= 1 << 16 && rules.iter().all(|&(a, b, m)| (a | b | m) >> 16 == 0);
        let mut table: Vec<(u64, u32, u32)> =
            rules.into_iter().enumerate().map(|(r, (a, b, m))| (((a as u64) << 32) | b as u64, r as u32, m)).collect();
        // By pair, then rank: the first of equal pairs has the best rank.
        table.sort_unstable();
        table.dedup_by_key(|e| e.0);
        if narrow {
            let keys = table.iter().map(|&(k, _, _)| (((k >> 32) as u32) << 16) | (k as u32)).collect();
            let values = table.iter().map(|&(_, r, m)| [r as u16, m as u16]).collect();
            Merges::Narrow { keys, values }
        } else {
            let keys = table.iter().map(|&(k, _, _)| k).collect();
            let values = table.iter().map(|&(_, r, m)| [r, m]).collect();
            Merges::Wide { keys, values }
        }
    }

    /// The rank of the rule merging `a` with `b` and the token it makes, if there is one.
    fn get(&self, a: u32, b: u32) -> Option<(u32, u32)> {
        match self {
            Merges::Narrow { keys, values } => {
                if (a | b) >> 16 != 0 {
                    return None;
                }
                let [r, m] = values[keys.binary_search(&((a << 16) | b)).ok()?];
                Some((r.into(), m.into()))
            }
            Merges::Wide { keys, values } => {
                let [r, m] = values[keys.binary_search(&(((a as u64) << 32) | b as u64)).ok()?];
                Some((r, m))
            }
        }
    }
}

struct Sym {
    id: u32,
    prev: u32,
    next: u32,
}

/// Applies `merges` to the symbols `ids` by rank (lowest first, leftmost on ties) and
/// appends the result to `out`.
pub(crate) fn merge_by_rank(merges: &Merges, ids: &[u32], out: &mut Vec<u32>) {
    if ids.len() < 2 {
        out.extend_from_slice(ids);
        return;
    }
    let n = ids.len() as u32;
    let mut syms: Vec<Sym> = ids
        .iter()
        .enumerate()
        .map(|(i, &id)| Sym { id, prev: if i == 0 { NONE } else { i as u32 - 1 }, next: if i as u32 + 1 == n { NONE } else { i as u32 + 1 } })
        .collect();
    // (rank, left position, left id, right id); a popped entry is applied only if the pair it
    // names is still there (entries go stale when a neighbour merges first).
    let mut heap: BinaryHeap<Reverse<(u32, u32, u32, u32)>> = BinaryHeap::new();
    for i in 0..ids.len() - 1 {
        if let Some((rank, _)) = merges.get(ids[i], ids[i + 1]) {
            heap.push(Reverse((rank, i as u32, ids[i], ids[i + 1])));
        }
    }
    let mut alive = alloc::vec![true; ids.len()];
    while let Some(Reverse((_, pos, a, b))) = heap.pop() {
        let p = pos as usize;
        if !alive[p] || syms[p].id != a || syms[p].next == NONE {
            continue;
        }
        let r = syms[p].next as usize;
        if syms[r].id != b {
            continue;
        }
        let Some((_, merged)) = merges.get(a, b) else { continue };
        syms[p].id = merged;
        alive[r] = false;
        let after = syms[r].next;
        syms[p].next = after;
        if after != NONE {
            syms[after as usize].prev = pos;
            if let Some((rank, _)) = merges.get(merged, syms[after as usize].id) {
                heap.push(Reverse((rank, pos, merged, syms[after as usize].id)));
            }
        }
        let before = syms[p].prev;
        if before != NONE {
            if let Some((rank, _)) = merges.get(syms[before as usize].id, merged) {
                heap.push(Reverse((rank, before, syms[before as usize].id, merged)));
            }
        }
    }
    let mut i = 0u32;
    while i != NONE {
        out.push(syms[i as usize].id);
        i = syms[i as usize].next;
    }
}

/// A score as an integer with the same order as `f32::total_cmp` (NaNs from a hostile file
/// sort deterministically instead of breaking the heap's order).
fn score_key(f: f32) -> i32 {
    let b = f.to_bits() as i32;
    b ^ ((((b >> 31) as u32) >> 1) as i32)
}

/// SentencePiece BPE as llama.cpp runs it on `llama` vocabularies: start from the UTF-8
/// characters of `text`, repeatedly join the adjacent pair whose concatenation is the
/// highest-scoring token (leftmost on ties), then emit each symbol's token or, for a
/// character the vocabulary lacks, its bytes' `<0xXX>` tokens (`byte_ids`), else `unk`.
/// Returns an error message for a byte with neither.
pub(crate) fn merge_by_score(
    vocab: &Vocab,
    scores: &[f32],
    byte_ids: &[Option<u32>; 256],
    unk: Option<u32>,
    text: &str,
    out: &mut Vec<u32>,
) -> Result<(), u8> {
    // Symbols as byte ranges of `text`.
    let start: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
    let n = start.len();
    if n == 0 {
        return Ok(());
    }
    let mut end: Vec<usize> = start[1..].to_vec();
    end.push(text.len());
    let mut next: Vec<u32> = (1..=n as u32).map(|i| if i as usize == n { NONE } else { i }).collect();
    let mut prev: Vec<u32> = (0..n as u32).map(|i| if i == 0 { NONE } else { i - 1 }).collect();
    let mut alive = alloc::vec![true; n];
    // (score, earlier left wins, left, right, joined length)
    let mut heap: BinaryHeap<(i32, Reverse<u32>, u32, usize)> = BinaryHeap::new();
    let score_of = |id: u32| scores.get(id as usize).copied().unwrap_or(0.0);
    let try_pair = |heap: &mut BinaryHeap<(i32, Reverse<u32>, u32, usize)>, l: u32, r: u32, start: &[usize], end: &[usize]| {
        if l == NONE || r == NONE {
            return;
        }
        let (s, e) = (start[l as usize], end[r as usize]);
        if let Some(id) = vocab.id(&text[s..e]) {
            heap.push((score_key(score_of(id)), Reverse(l), r, e - s));
        }
    };
    for i in 0..n - 1 {
        try_pair(&mut heap, i as u32, i as u32 + 1, &start, &end);
    }
    while let Some((_, Reverse(l), r, len)) = heap.pop() {
        let (li, ri) = (l as usize, r as usize);
        if !alive[li] || !alive[ri] || next[li] != r || end[ri] - start[li] != len {
            continue;
        }
        end[li] = end[ri];
        alive[ri] = false;
        next[li] = next[ri];
        if next[ri] != NONE {
            prev[next[ri] as usize] = l;
        }
        try_pair(&mut heap, prev[li], l, &start, &end);
        try_pair(&mut heap, l, next[li], &start, &end);
    }
    let mut i = 0u32;
    while i != NONE {
        let piece = &text[start[i as usize]..end[i as usize]];
        match vocab.id(piece) {
            Some(id) => out.push(id),
            None => {
                for &b in piece.as_bytes() {
                    match byte_ids[b as usize].or(unk) {
                        Some(id) => out.push(id),
                        None => return Err(b),
                    }
                }
            }
        }
        i = next[i as usize];
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{Merges, Vocab};
    use alloc::string::{String, ToString};
    use alloc::vec::Vec;

    /// Lookups agree with a linear scan (largest id of equal texts) on texts that share and
    /// straddle the 4-byte key: shorter prefixes, embedded NULs, multi-byte characters,
    /// duplicates and absent texts.
    #[test]
    fn lookup_matches_a_linear_scan() {
        let texts: Vec<String> = ["abcd", "abc", "abcde", "abcdd", "ab\0", "ab", "a", "", "ĠĠ", "Ġa", "Ġab", "abcd", "b", "abc\0e"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let v = Vocab::new(texts.clone()).unwrap();
        for (id, t) in texts.iter().enumerate() {
            assert_eq!(v.text(id as u32), t);
        }
        assert_eq!(v.text(texts.len() as u32), "");
        let scan = |s: &str| texts.iter().rposition(|t| t == s).map(|i| i as u32);
        for q in texts.iter().map(String::as_str).chain(["abcdf", "abce", "ab\0\0", "Ġ", "zz", "abc\0"]) {
            assert_eq!(v.id(q), scan(q), "{q:?}");
        }
    }

    /// A rule's rank is its first index among the rules and its token the one that rule
    /// names, in both storage widths; pairs without a rule (ids past 2^16 in the narrow table
    /// among them, which must not alias a narrow key) have none.
    #[test]
    fn merges_match_a_linear_scan() {
        let narrow: Vec<(u32, u32, u32)> =
            alloc::vec![(5, 7, 9), (7, 5, 10), (0, 0, 1), (5, 7, 9), (65535, 1, 65535), (1, 65535, 2), (3, 3, 4), (0, 1, 0)];
        let mut wide = narrow.clone();
        wide.extend([(70000, 2, 3), (2, 70000, 4), (1 << 31, 9, 5), (4, 4, 1 << 20)]);
        for (rules, want_narrow) in [(narrow, true), (wide, false)] {
            let m = Merges::new(rules.clone());
            assert_eq!(matches!(m, Merges::Narrow { .. }), want_narrow);
            let ids = [0u32, 1, 2, 3, 4, 5, 7, 9, 65535, 65536, 70000, 1 << 31, (1 << 16) | 5, u32::MAX];
            for &a in &ids {
                for &b in &ids {
                    let scan = rules.iter().position(|&(x, y, _)| (x, y) == (a, b)).map(|i| (i as u32, rules[i].2));
                    assert_eq!(m.get(a, b), scan, "({a}, {b})");
                }
            }
        }
    }
}
