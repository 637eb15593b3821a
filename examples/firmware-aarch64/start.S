/* Entry point of the firmware for QEMU `-M virt` (the CPU starts at EL1 with the MMU off).
 * Before any C or Rust code runs: set the stack, allow FP/SIMD and SVE at EL1 (Rust code for
 * aarch64-unknown-none uses NEON registers, which trap while CPACR_EL1.FPEN is 0), zero .bss.
 * main's return value becomes the semihosting exit status, which QEMU returns as its own. */
    .section .text.entry, "ax"
    .global _start
_start:
    ldr     x0, =__stack_end
    mov     sp, x0
    mrs     x0, cpacr_el1
    orr     x0, x0, #(0x3 << 20)        /* FPEN: no FP/SIMD traps at EL0/EL1 */
    orr     x0, x0, #(0x3 << 16)        /* ZEN: no SVE traps at EL0/EL1 */
    msr     cpacr_el1, x0
    isb
    ldr     x0, =__bss_start
    ldr     x1, =__bss_end
zero_bss:
    cmp     x0, x1
    b.hs    run_main
    stp     xzr, xzr, [x0], #16
    b       zero_bss
run_main:
    bl      main
    bl      semihost_exit               /* never returns */
halt:
    wfi
    b       halt
