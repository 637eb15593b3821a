/* Reset path of the Cortex-M4F firmware for QEMU `-M mps2-an386`: the vector table, then
 * Reset_Handler enables the FPU (Rust code for thumbv7em-none-eabihf uses the FP registers),
 * copies .data from flash, zeroes .bss, runs main and exits with its status. */
#include <stdint.h>

#include "semihost.h"

extern uint32_t __data_load[], __data_start[], __data_end[], __bss_start[], __bss_end[];
extern uint32_t __stack_end[];
int main(void);

#define CPACR (*(volatile uint32_t*)0xE000ED88u)

void Reset_Handler(void) {
  CPACR |= 0xFu << 20; /* CP10 and CP11: full access to the FPU */
  __asm__ volatile("dsb\n isb" ::: "memory");
  for (uint32_t *src = __data_load, *dst = __data_start; dst < __data_end;) *dst++ = *src++;
  for (uint32_t* p = __bss_start; p < __bss_end;) *p++ = 0;
  semihost_exit(main());
}

/* Any fault ends the run with a recognisable status instead of hanging QEMU. */
void Fault_Handler(void) {
  sh_puts("fw: FAULT\n");
  semihost_exit(102);
}

/* Initial stack pointer, reset, NMI, HardFault, MemManage, BusFault, UsageFault. */
__attribute__((section(".vectors"), used)) static void* const vectors[] = {
    __stack_end, (void*)Reset_Handler, (void*)Fault_Handler, (void*)Fault_Handler,
    (void*)Fault_Handler, (void*)Fault_Handler, (void*)Fault_Handler,
};
