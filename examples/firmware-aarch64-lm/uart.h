/* The console of the QEMU `virt` board: its PL011 UART, written by polling (no interrupts, no
 * set-up: QEMU's model transmits at once). With -nographic it appears on QEMU's stdout. */
#ifndef FW_UART_H
#define FW_UART_H

#include <stddef.h>
#include <stdint.h>

/* Writes a NUL-terminated string. */
void uart_puts(const char* s);
/* Writes an unsigned integer in decimal. */
void uart_put_u64(uint64_t v);
/* Writes an unsigned integer in hexadecimal (no prefix). */
void uart_put_hex(uint64_t v);

#endif
