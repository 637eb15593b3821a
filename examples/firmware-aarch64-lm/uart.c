/* PL011 on QEMU `virt` (the board's device tree names it at 0x09000000): a byte written to the
 * data register is sent; the flag register's TXFF bit says the FIFO is full. A real board
 * would also set the baud rate and enable the UART; QEMU's model needs neither. */
#include "uart.h"

#define PL011_BASE 0x09000000UL
#define PL011_DR (*(volatile uint32_t*)(PL011_BASE + 0x00))
#define PL011_FR (*(volatile uint32_t*)(PL011_BASE + 0x18))
#define PL011_FR_TXFF (1u << 5)

static void put_byte(char c) {
  while (PL011_FR & PL011_FR_TXFF) {
  }
  PL011_DR = (uint32_t)(unsigned char)c;
}

void uart_puts(const char* s) {
  while (*s) put_byte(*s++);
}

void uart_put_u64(uint64_t v) {
  char buf[21];
  int i = 20;
  buf[i] = 0;
  do {
    buf[--i] = (char)('0' + v % 10);
    v /= 10;
  } while (v != 0);
  uart_puts(&buf[i]);
}

void uart_put_hex(uint64_t v) {
  static const char digits[] = "0123456789abcdef";
  char buf[17];
  int i = 16;
  buf[i] = 0;
  do {
    buf[--i] = digits[v & 15];
    v >>= 4;
  } while (v != 0);
  uart_puts(&buf[i]);
}
