//! Where a decode step's host time goes on the GPU, call by call: loads a GGUF model, decodes
//! greedily one step at a time on the Vulkan device and prints, per step, the dispatches, the
//! backend's recording time and the driver calls' shares (`QueueStats`); first, how long the
//! pipelines took to create and what the on-disk pipeline cache held (`PipelineCacheStats`).
//! With `MLX_ARM_VULKAN_PROFILE=batch` also the GPU busy and idle time per step.
//! Usage: cargo run --release -p mlx-arm-vulkan --example decode_calls -- MODEL.gguf [STEPS]

use mlx_arm_core::{device, Device};
use mlx_arm_lm::generate;
use mlx_arm_lm::load::files;
use mlx_arm_vulkan as vkb;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or("usage: decode_calls MODEL.gguf [STEPS]")?;
    let steps: usize = args.next().map_or(Ok(64), |s| s.parse())?;
    let start = std::time::Instant::now();
    let info = vkb::init()?;
    println!("device: {} ({}), fusion {}", info.name, info.kind, if vkb::fusion_enabled() { "on" } else { "off" });
    let loaded = files::load_model(std::path::Path::new(&path))?;
    let model = &loaded.model;
    device::set_default_device(Device::GPU)?;
    let mut cache = model.new_cache();
    let prompt: Vec<u32> = (1..17).collect();
    let mut tok = generate::prefill_greedy(model, &mut cache, &prompt, generate::DEFAULT_PREFILL_CHUNK)?;
    // Warm-up steps (pipelines, pool), then the measured ones.
    for _ in 0..8 {
        tok = generate::step_greedy(model, &mut cache, &[tok])?;
    }
    let warm_ms = start.elapsed().as_secs_f64() * 1e3;
    vkb::save_pipeline_cache();
    if let Some(pc) = vkb::pipeline_cache_stats() {
        println!(
            "RESULT pipelines: {} created in {:.1} ms (vkCreateComputePipelines); start to 8th step {warm_ms:.0} ms; disk cache {}: loaded {} bytes{}, saved {} bytes ({} saves){}",
            pc.pipelines_built,
            pc.build_ns as f64 * 1e-6,
            pc.path.as_ref().map_or("off".to_string(), |p| p.display().to_string()),
            pc.loaded_bytes,
            pc.rejected.map_or(String::new(), |r| format!(" (file refused: {r})")),
            pc.saved_bytes,
            pc.saves,
            pc.save_error.map_or(String::new(), |e| format!(" (save failed: {e})")),
        );
    }
    let before = vkb::queue_stats();
    let bt0 = vkb::batch_times();
    let t = std::time::Instant::now();
    for _ in 0..steps {
        tok = generate::step_greedy(model, &mut cache, &[tok])?;
    }
    let wall = t.elapsed().as_secs_f64() * 1e3 / steps as f64;
    let a = vkb::queue_stats();
    let bt = vkb::batch_times();
    let per = |x: u64, y: u64| (x - y) as f64 * 1e-3 / steps as f64;
    let n = (a.dispatches - before.dispatches) as f64 / steps as f64;
    println!("RESULT per step: {wall:.3} ms wall, {n:.0} dispatches, {:.0} barriers", (a.barriers - before.barriers) as f64 / steps as f64);
    println!(
        "RESULT recording {:.1} µs: Vulkan calls {:.1} µs = barriers {:.1} + push descriptors (and pipeline binds) {:.1} + push constants {:.1} + dispatches {:.1}; output buffers {:.1}, submitting {:.1}, waiting {:.1}",
        per(a.record_ns, before.record_ns),
        per(a.command_ns, before.command_ns),
        per(a.barrier_ns, before.barrier_ns),
        per(a.descriptor_ns, before.descriptor_ns),
        per(a.push_constant_ns, before.push_constant_ns),
        per(a.cmd_dispatch_ns, before.cmd_dispatch_ns),
        per(a.alloc_ns, before.alloc_ns),
        per(a.submit_ns, before.submit_ns),
        per(a.wait_ns, before.wait_ns),
    );
    if bt.batches > bt0.batches {
        // MLX_ARM_VULKAN_PROFILE=batch: the GPU's side of the same steps (the batches read so
        // far: the last step's may still be in flight).
        let k = steps as f64;
        let busy = (bt.busy_ns - bt0.busy_ns) * 1e-3 / k;
        println!(
            "RESULT GPU per step: busy {busy:.1} µs ({:.2} µs a dispatch), idle between batches {:.1} µs over {:.1} gaps, {:.1} batches; host recording {:.1} µs",
            busy / n,
            (bt.idle_ns - bt0.idle_ns) * 1e-3 / k,
            (bt.gaps - bt0.gaps) as f64 / k,
            (bt.batches - bt0.batches) as f64 / k,
            per(a.record_ns, before.record_ns),
        );
    }
    Ok(())
}
