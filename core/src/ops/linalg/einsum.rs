//! `mx.einsum`: parsing and validation as MLX 0.32 does them (implicit output, ellipsis
//! expansion with unused letters, repeated-index and broadcast checks, the same messages);
//! evaluation contracts operands left to right. Each step collapses repeated indices
//! (diagonals), sums indices used nowhere else, and then either contracts through a batched
//! matmul (when something is contracted, as MLX does — so integer contractions fail like
//! MLX's) or multiplies with broadcasting. MLX picks a greedy path for 3+ operands; the
//! result is the same up to floating-point summation order.

use crate::array::Array;
use crate::error::{Error, Result};
use crate::ops::{diagonal, matmul, multiply, reshape, sum, transpose};
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

const OP: &str = "einsum";

/// Splits `"ij,jk->ik"` into inputs and output; without `->` the output is every index used
/// once, sorted, after a leading ellipsis if any (numpy's implicit mode).
fn parse(subscripts: &str) -> (Vec<Vec<u8>>, Vec<u8>) {
    let s: Vec<u8> = subscripts.bytes().filter(|&c| c != b' ').collect();
    let arrow = s.windows(2).position(|w| w == b"->");
    let (lhs, rhs) = match arrow {
        Some(p) => (s[..p].to_vec(), s[p + 2..].to_vec()),
        None => {
            let mut rhs: Vec<u8> = Vec::new();
            let mut counts = [0usize; 256];
            for &c in &s {
                if c == b',' {
                    continue;
                }
                if c == b'.' && rhs.is_empty() {
                    rhs.extend_from_slice(b"...");
                    continue;
                }
                counts[c as usize] += 1;
            }
            for (c, &n) in counts.iter().enumerate() {
                if n == 1 {
                    rhs.push(c as u8);
                }
            }
            rhs.sort_unstable();
            (s.clone(), rhs)
        }
    };
    let mut inputs: Vec<Vec<u8>> = lhs.split(|&c| c == b',').map(|t| t.to_vec()).collect();
    // Like getline: a trailing empty token is not an operand.
    if inputs.last().is_some_and(|t| t.is_empty()) {
        inputs.pop();
    }
    (inputs, rhs)
}

/// Replaces `...` with the last `len` unused letters; validates letters.
fn expand_ellipsis(sub: &mut Vec<u8>, ndim: Option<usize>, remaining: &[u8], max_len: &mut usize, idx: usize) -> Result<()> {
    let mut have = false;
    let (mut before, mut after) = (0usize, 0usize);
    let mut i = 0;
    while i < sub.len() {
        let c = sub[i];
        if !c.is_ascii_alphabetic() {
            if i + 2 >= sub.len() || c != b'.' || sub[i + 1] != b'.' || sub[i + 2] != b'.' {
                return Err(Error::invalid(OP, format!("Subscripts must be letters, but got '{}'.", c as char)));
            }
            if have {
                return Err(Error::invalid(
                    OP,
                    format!("Only one ellipsis per subscript is allowed but found more in '{}'.", String::from_utf8_lossy(sub)),
                ));
            }
            have = true;
            i += 3;
            continue;
        }
        if have {
            after += 1;
        } else {
            before += 1;
        }
        i += 1;
    }
    if have {
        let len = match ndim {
            Some(nd) => {
                if nd < before + after {
                    return Err(Error::invalid(
                        OP,
                        format!(
                            "Operand {idx} has insufficient dimensions for subscript '{}'. The ellipsis requires at least {} dimensions but the operand has {nd} dimensions.",
                            String::from_utf8_lossy(sub),
                            before + after
                        ),
                    ));
                }
                let l = nd - before - after;
                *max_len = (*max_len).max(l);
                l
            }
            None => *max_len,
        };
        if len > remaining.len() {
            return Err(Error::invalid(OP, "Too many dimensions for einsum."));
        }
        let fill = &remaining[remaining.len() - len..];
        sub.splice(before..before + 3, fill.iter().copied());
    }
    Ok(())
}

/// `mx.einsum(subscripts, *operands)`.
pub fn einsum(subscripts: &str, operands: &[Array]) -> Result<Array> {
    if operands.is_empty() {
        return Err(Error::invalid(OP, "At least one operand is required."));
    }
    let (mut ins, mut out) = parse(subscripts);
    if ins.len() != operands.len() {
        return Err(Error::invalid(
            OP,
            format!("Number of operands, {}, does not match number of input subscripts, {}", operands.len(), ins.len()),
        ));
    }
    let used: Vec<u8> = subscripts.bytes().collect();
    let remaining: Vec<u8> = (b'a'..=b'z').chain(b'A'..=b'Z').filter(|c| !used.contains(c)).collect();
    let mut max_len = 0usize;
    for (i, (sub, op)) in ins.iter_mut().zip(operands).enumerate() {
        expand_ellipsis(sub, Some(op.ndim()), &remaining, &mut max_len, i)?;
    }
    expand_ellipsis(&mut out, None, &remaining, &mut max_len, 0)?;
    for (i, c) in out.iter().enumerate() {
        if out[..i].contains(c) {
            return Err(Error::invalid(OP, "Repeat indices not allowed in output."));
        }
    }
    // Sizes per index, with size-1 broadcasting across operands.
    let mut dims: Vec<(u8, usize)> = Vec::new();
    for (i, (sub, op)) in ins.iter().zip(operands).enumerate() {
        if sub.len() != op.ndim() {
            return Err(Error::invalid(
                OP,
                format!("Invalid number of subscripts {} for input {i} with {} dimensions.", sub.len(), op.ndim()),
            ));
        }
        for (j, &c) in sub.iter().enumerate() {
            let d = op.shape()[j];
            if let Some(k) = sub[..j].iter().position(|&x| x == c) {
                if op.shape()[k] != d {
                    return Err(Error::invalid(
                        OP,
                        format!("Dimensions of repeated subscripts do not have the same size ({} != {d}).", op.shape()[k]),
                    ));
                }
            }
        }
        for (j, &c) in sub.iter().enumerate() {
            let d = op.shape()[j];
            match dims.iter_mut().find(|(x, _)| *x == c) {
                Some((_, have)) => {
                    if d != 1 && *have != 1 && *have != d {
                        return Err(Error::invalid(
                            OP,
                            format!(
                                "Cannot broadcast dimension {j} of input {i} with shape {} to size {have}.",
                                super::fmt_shape(op.shape())
                            ),
                        ));
                    }
                    *have = (*have).max(d);
                }
                None => dims.push((c, d)),
            }
        }
    }
    for c in &out {
        if !dims.iter().any(|(x, _)| x == c) {
            return Err(Error::invalid(OP, format!("Output subscript '{}' does not appear in the inputs.", *c as char)));
        }
    }

    let mut terms: Vec<(Array, Vec<u8>)> = Vec::new();
    for (sub, op) in ins.iter().zip(operands) {
        terms.push(collapse_repeats(op.clone(), sub.clone())?);
    }
    let mut terms = terms.into_iter();
    let (mut acc, mut acc_sub) = terms.next().ok_or_else(|| Error::invalid(OP, "At least one operand is required."))?;
    let rest: Vec<(Array, Vec<u8>)> = terms.collect();
    for (k, (b, b_sub)) in rest.iter().enumerate() {
        // Indices still needed after this step: the output's and those of later operands.
        let mut keep = out.clone();
        for (_, s) in &rest[k + 1..] {
            keep.extend_from_slice(s);
        }
        let (x, xs) = sum_unused(acc, acc_sub, b_sub, &keep)?;
        let (y, ys) = sum_unused(b.clone(), b_sub.clone(), &xs, &keep)?;
        let (r, rs) = pair(&x, &xs, &y, &ys, &keep)?;
        acc = r;
        acc_sub = rs;
    }
    let (acc, acc_sub) = sum_unused(acc, acc_sub, &[], &out)?;
    let perm: Vec<isize> = out.iter().map(|c| acc_sub.iter().position(|x| x == c).unwrap_or(0) as isize).collect();
    if perm.iter().enumerate().all(|(i, &p)| i as isize == p) {
        Ok(acc)
    } else {
        transpose(&acc, Some(&perm))
    }
}

/// Takes diagonals until every index of the term appears once (`"iij"` → `"ji"`).
fn collapse_repeats(mut a: Array, mut sub: Vec<u8>) -> Result<(Array, Vec<u8>)> {
    loop {
        let dup = (0..sub.len()).find_map(|j| sub[j + 1..].iter().position(|&c| c == sub[j]).map(|k| (j, j + 1 + k)));
        let Some((i, j)) = dup else { return Ok((a, sub)) };
        let c = sub[i];
        a = diagonal(&a, 0, i as isize, j as isize)?;
        sub.remove(j);
        sub.remove(i);
        sub.push(c);
    }
}

/// Sums the axes of a term whose index appears neither in `other` nor in `keep`.
fn sum_unused(a: Array, sub: Vec<u8>, other: &[u8], keep: &[u8]) -> Result<(Array, Vec<u8>)> {
    let axes: Vec<isize> = (0..sub.len()).filter(|&i| !other.contains(&sub[i]) && !keep.contains(&sub[i])).map(|i| i as isize).collect();
    if axes.is_empty() {
        return Ok((a, sub));
    }
    let s = sum(&a, Some(&axes), false)?;
    let sub = (0..sub.len()).filter(|&i| !axes.contains(&(i as isize))).map(|i| sub[i]).collect();
    Ok((s, sub))
}

/// Combines two terms whose indices are all either shared or kept.
fn pair(a: &Array, sa: &[u8], b: &Array, sb: &[u8], keep: &[u8]) -> Result<(Array, Vec<u8>)> {
    let contract: Vec<u8> = sa.iter().copied().filter(|c| !keep.contains(c)).collect();
    let batch: Vec<u8> = sa.iter().copied().filter(|c| keep.contains(c) && sb.contains(c)).collect();
    let a_only: Vec<u8> = sa.iter().copied().filter(|c| keep.contains(c) && !sb.contains(c)).collect();
    let b_only: Vec<u8> = sb.iter().copied().filter(|c| !sa.contains(c)).collect();
    let size = |x: &Array, s: &[u8], c: u8| s.iter().position(|&y| y == c).map_or(1, |i| x.shape()[i]);
    let bdim = |c: u8| size(a, sa, c).max(size(b, sb, c));
    let order = |x: &Array, s: &[u8], groups: &[&[u8]]| -> Result<Array> {
        let perm: Vec<isize> =
            groups.iter().flat_map(|g| g.iter()).map(|c| s.iter().position(|y| y == c).unwrap_or(0) as isize).collect();
        transpose(x, Some(&perm))
    };
    let mut result_sub = batch.clone();
    result_sub.extend_from_slice(&a_only);
    result_sub.extend_from_slice(&b_only);
    let prod = |cs: &[u8]| cs.iter().map(|&c| bdim(c)).product::<usize>() as isize;
    if !contract.is_empty() {
        // Batched tensordot: [batch, a_only, contract] @ [batch, contract, b_only].
        let xa = order(a, sa, &[&batch, &a_only, &contract])?;
        let xb = order(b, sb, &[&batch, &contract, &b_only])?;
        let mut full_a: Vec<usize> = batch.iter().chain(&contract).map(|&c| bdim(c)).collect();
        full_a.splice(batch.len()..batch.len(), a_only.iter().map(|&c| size(a, sa, c)));
        let mut full_b: Vec<usize> = batch.iter().chain(&contract).map(|&c| bdim(c)).collect();
        full_b.extend(b_only.iter().map(|&c| size(b, sb, c)));
        let xa = crate::ops::shape::broadcast_operand(&xa, &full_a)?;
        let xb = crate::ops::shape::broadcast_operand(&xb, &full_b)?;
        let mut sa2: Vec<isize> = batch.iter().map(|&c| bdim(c) as isize).collect();
        let mut sb2 = sa2.clone();
        sa2.push(a_only.iter().map(|&c| size(a, sa, c)).product::<usize>() as isize);
        sa2.push(prod(&contract));
        sb2.push(prod(&contract));
        sb2.push(b_only.iter().map(|&c| size(b, sb, c)).product::<usize>() as isize);
        let m = matmul(&reshape(&xa, &sa2)?, &reshape(&xb, &sb2)?)?;
        let out_shape: Vec<isize> = batch
            .iter()
            .map(|&c| bdim(c) as isize)
            .chain(a_only.iter().map(|&c| size(a, sa, c) as isize))
            .chain(b_only.iter().map(|&c| size(b, sb, c) as isize))
            .collect();
        return Ok((reshape(&m, &out_shape)?, result_sub));
    }
    // Elementwise: lay both out as [batch, a_only, b_only] with size-1 gaps, then multiply.
    let xa = order(a, sa, &[&batch, &a_only])?;
    let xb = order(b, sb, &[&batch, &b_only])?;
    let mut ra: Vec<isize> = batch.iter().chain(&a_only).map(|&c| size(a, sa, c) as isize).collect();
    ra.extend(core::iter::repeat_n(1, b_only.len()));
    let mut rb: Vec<isize> = batch.iter().map(|&c| size(b, sb, c) as isize).collect();
    rb.extend(core::iter::repeat_n(1, a_only.len()));
    rb.extend(b_only.iter().map(|&c| size(b, sb, c) as isize));
    Ok((multiply(&reshape(&xa, &ra)?, &reshape(&xb, &rb)?)?, result_sub))
}
