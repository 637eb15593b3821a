//! Bare-metal glue (feature `bare-metal` without `std`): the firmware supplies memory and the
//! panic path through three C functions it links in. Nothing here runs on hosted builds.
//!
//! ```c
//! void* mlx_arm_platform_alloc(size_t size, size_t align);  /* NULL when out of memory */
//! void  mlx_arm_platform_free(void* ptr, size_t size, size_t align);
//! void  mlx_arm_platform_panic(const char* msg, size_t len); /* should not return */
//! ```
//!
//! Every Rust allocation (array buffers, graph nodes, handles, strings) goes through the two
//! memory hooks, so the firmware decides where the library's memory lives and how much it may
//! take. A failed allocation of an array buffer is an ordinary error (`Unable to allocate N
//! bytes.`); a failed small allocation elsewhere ends in the panic path.
//!
//! A panic (a library bug, or out of memory outside buffers) cannot be caught without std, so
//! it formats its message into a fixed stack buffer (no allocation: the heap may be what
//! failed), hands it to `mlx_arm_platform_panic` and then halts this core forever if the hook
//! returns.

use core::alloc::{GlobalAlloc, Layout};
use core::ffi::{c_char, c_void};
use core::fmt::{self, Write};

extern "C" {
    fn mlx_arm_platform_alloc(size: usize, align: usize) -> *mut c_void;
    fn mlx_arm_platform_free(ptr: *mut c_void, size: usize, align: usize);
    fn mlx_arm_platform_panic(msg: *const c_char, len: usize);
}

/// The global allocator: forwards every request to the firmware's hooks.
struct PlatformAlloc;

// SAFETY: the firmware's hooks promise `align`-aligned blocks of at least `size` bytes (or
// NULL), and `free` receives exactly what `alloc` handed out, with the same size and align.
unsafe impl GlobalAlloc for PlatformAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        mlx_arm_platform_alloc(layout.size(), layout.align()) as *mut u8
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        mlx_arm_platform_free(ptr as *mut c_void, layout.size(), layout.align())
    }
}

#[global_allocator]
static ALLOCATOR: PlatformAlloc = PlatformAlloc;

/// Bytes of panic text kept (longer messages are cut).
const PANIC_MSG_CAP: usize = 256;

/// A `fmt::Write` into a fixed buffer that silently truncates (always leaves room for a NUL).
struct FixedBuf {
    buf: [u8; PANIC_MSG_CAP],
    len: usize,
}

impl Write for FixedBuf {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let room = PANIC_MSG_CAP - 1 - self.len;
        let n = s.len().min(room);
        self.buf[self.len..self.len + n].copy_from_slice(&s.as_bytes()[..n]);
        self.len += n;
        Ok(())
    }
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    let mut out = FixedBuf { buf: [0; PANIC_MSG_CAP], len: 0 };
    let _ = write!(out, "mlx-arm panic: {}", info.message());
    if let Some(loc) = info.location() {
        let _ = write!(out, " at {}:{}", loc.file(), loc.line());
    }
    let len = out.len;
    out.buf[len] = 0;
    // SAFETY: the firmware's hook; the text is `len` bytes plus a NUL, alive for the call.
    unsafe { mlx_arm_platform_panic(out.buf.as_ptr() as *const c_char, len) };
    loop {
        core::hint::spin_loop();
    }
}
