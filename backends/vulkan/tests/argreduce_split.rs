//! argmax / argmin of few long rows (greedy decoding's logits) run over many workgroups in two
//! dispatches (argreduce_split.comp): the index must be exactly the CPU's (MLX's rule: the
//! first NaN if any, else the first extreme value), also when the winner or a tie sits in a
//! later chunk of the row, for float32 and float16, over strided views.

use mlx_arm_core::{device, ops, Array, DType, Device};
use mlx_arm_vulkan as vkb;

/// argmax (`max`) or argmin of `x` (a GPU-resident array, so that no upload is counted as a
/// dispatch on a discrete GPU) over `axis` on the GPU, the dispatches it took, and the CPU's
/// result for the same input.
fn both(x: &Array, axis: isize, max: bool) -> (Vec<u32>, usize, Vec<u32>) {
    let f = if max { ops::argmax } else { ops::argmin };
    device::set_default_device(Device::CPU).unwrap();
    let want = f(x, Some(axis), false).unwrap().to_vec::<u32>().unwrap();
    device::set_default_device(Device::GPU).unwrap();
    let before = vkb::queue_stats().dispatches;
    let got = f(x, Some(axis), false).unwrap();
    got.eval().unwrap();
    let dispatched = vkb::queue_stats().dispatches - before;
    let got = got.to_vec::<u32>().unwrap();
    device::set_default_device(Device::CPU).unwrap();
    (got, dispatched, want)
}

/// A `[rows, n]` float32 array from values in [-4, 4) (xorshift), then `edit` applied per row.
fn rows(rows: usize, n: usize, edit: impl Fn(usize, &mut [f32])) -> Vec<f32> {
    let mut s = 0x9e37_79b9u32;
    let mut v: Vec<f32> = (0..rows * n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            -4.0 + 8.0 * ((s >> 8) as f32 / (1u32 << 24) as f32)
        })
        .collect();
    for (r, row) in v.chunks_mut(n).enumerate() {
        edit(r, row);
    }
    v
}

/// `v` as a `[shape]` array of `dt` in GPU memory (x + 0 computed there: exact, NaNs and
/// infinities kept).
fn array(v: &[f32], shape: &[usize], dt: DType) -> Array {
    device::set_default_device(Device::CPU).unwrap();
    let a = ops::astype(&Array::from_slice(v, shape).unwrap(), dt).unwrap();
    let zero = ops::astype(&Array::scalar(0.0f32).unwrap(), dt).unwrap();
    a.eval().unwrap();
    zero.eval().unwrap();
    device::set_default_device(Device::GPU).unwrap();
    let g = ops::add(&a, &zero).unwrap();
    g.eval().unwrap();
    device::set_default_device(Device::CPU).unwrap();
    g
}

// One test: the default device and the dispatch counter are process-wide, so cases run in
// turn, not on parallel test threads.
#[test]
fn argmax_and_argmin_on_the_gpu_pick_the_cpus_index() {
    long_rows_split_over_workgroups();
    short_rows_and_many_rows_keep_one_workgroup_per_row();
}

fn long_rows_split_over_workgroups() {
    let info = vkb::init().expect("a Vulkan device (CI: Mesa lavapipe)");
    let mut dtypes = vec![DType::Float32];
    if info.f16 {
        dtypes.push(DType::Float16);
    }
    const N: usize = 49152;
    for dt in dtypes {
        // Random logits (no ties in float32), as greedy decoding sees them.
        let v = rows(2, N, |_, _| {});
        let (got, dispatched, want) = both(&array(&v, &[2, N], dt), -1, true);
        assert_eq!(dispatched, 2, "{dt}: the two-stage kernel ran");
        assert_eq!(got, want, "{dt} random argmax");
        let (got, _, want) = both(&array(&v, &[2, N], dt), 1, false);
        assert_eq!(got, want, "{dt} random argmin");

        // Ties of the maximum across chunks: the first wins (row 0 in a later chunk only, row 1
        // with the first in chunk 0 and more later, row 2 tied within one chunk).
        let tied = rows(3, N, |r, row| {
            let at: &[usize] = match r {
                0 => &[30001, 30000 + 512, 47000],
                1 => &[3, 513, 40000],
                _ => &[20000, 20001],
            };
            for &i in at {
                row[i] = 7.0;
            }
        });
        let (got, _, want) = both(&array(&tied, &[3, N], dt), -1, true);
        assert_eq!(got, vec![30001, 3, 20000], "{dt} ties: hand-computed first index");
        assert_eq!(got, want, "{dt} ties: the CPU's index");
        // The same for the minimum.
        let low: Vec<f32> = tied.iter().map(|&x| -x).collect();
        let (got, _, want) = both(&array(&low, &[3, N], dt), -1, false);
        assert_eq!(got, vec![30001, 3, 20000], "{dt} argmin ties");
        assert_eq!(got, want, "{dt} argmin ties: the CPU's index");

        // NaNs win, the first of them (in a later chunk than a large value), for both ops;
        // -inf everywhere but one element.
        let nans = rows(3, N, |r, row| match r {
            0 => {
                row[100] = 1e4;
                row[45000] = f32::NAN;
                row[46000] = f32::NAN;
            }
            1 => {
                row[1025] = f32::NAN;
                row[1024] = 1e4;
            }
            _ => {
                row.fill(f32::NEG_INFINITY);
                row[N - 1] = -1.0;
            }
        });
        let (got, _, want) = both(&array(&nans, &[3, N], dt), -1, true);
        assert_eq!(got, vec![45000, 1025, N as u32 - 1], "{dt} NaN argmax");
        assert_eq!(got, want, "{dt} NaN argmax: the CPU's index");
        let (got, _, want) = both(&array(&nans, &[3, N], dt), -1, false);
        assert_eq!(&got[..2], &[45000, 1025], "{dt} NaN argmin");
        assert_eq!(got, want, "{dt} NaN argmin: the CPU's index");

        // A strided view: axis 0 of a transposed [3, 20000] (step 3), and a length that is no
        // multiple of the chunk.
        let v = rows(3, 20000 + 77, |r, row| row[20000 + 76 - r] = 9.0);
        let x = array(&v, &[3, 20077], dt);
        device::set_default_device(Device::GPU).unwrap();
        let t = ops::transpose(&x, None).unwrap();
        let (got, dispatched, want) = both(&t, 0, true);
        assert_eq!(dispatched, 2, "{dt}: the strided view was read in place by the two-stage kernel");
        assert_eq!(got, vec![20076, 20075, 20074], "{dt} strided argmax");
        assert_eq!(got, want, "{dt} strided argmax: the CPU's index");
    }
}

fn short_rows_and_many_rows_keep_one_workgroup_per_row() {
    vkb::init().expect("a Vulkan device (CI: Mesa lavapipe)");
    // Rows shorter than the split length, and more rows than the split takes: one dispatch.
    for (r, n) in [(4, 4095), (65, 4096)] {
        let v = rows(r, n, |i, row| row[(i * 37) % n] = 9.0);
        let (got, dispatched, want) = both(&array(&v, &[r, n], DType::Float32), -1, true);
        assert_eq!(dispatched, 1, "{r}×{n}: one dispatch");
        assert_eq!(got, want, "{r}×{n}");
    }
    // The smallest split case.
    let v = rows(64, 4096, |i, row| row[4095 - i] = 9.0);
    let (got, dispatched, want) = both(&array(&v, &[64, 4096], DType::Float32), -1, true);
    assert_eq!(dispatched, 2);
    assert_eq!(got, (0..64).map(|i| 4095 - i).collect::<Vec<u32>>());
    assert_eq!(got, want);
}
