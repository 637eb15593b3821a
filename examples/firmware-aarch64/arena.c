/* A first-fit allocator over one static array, implementing the hooks that libmlx_arm.a
 * (built with --features bare-metal) links against. The library passes the same size and
 * alignment to free as it did to alloc (Rust's GlobalAlloc contract), so blocks need no
 * header: free regions form an address-ordered list kept inside the free memory itself, and
 * neighbours merge on free. Single core, no interrupts use it: no locking. */
#include "arena.h"

#include <stdint.h>

#include "semihost.h"

/* Every block is a multiple of GRAIN bytes and GRAIN-aligned, big enough to hold a free node. */
#define GRAIN 16u

struct free_node {
  size_t size;             /* bytes in this free region, a multiple of GRAIN */
  struct free_node* next;  /* next free region at a higher address */
};

static unsigned char arena[FW_ARENA_BYTES] __attribute__((aligned(GRAIN)));
static struct free_node* free_list;
static int initialised;
static size_t in_use, peak, failures;

size_t arena_in_use(void) { return in_use; }
size_t arena_peak(void) { return peak; }
size_t arena_failures(void) { return failures; }

static size_t round_up(size_t v, size_t to) { return (v + to - 1) / to * to; }

static void init(void) {
  free_list = (struct free_node*)arena;
  free_list->size = FW_ARENA_BYTES;
  free_list->next = 0;
  initialised = 1;
}

void* mlx_arm_platform_alloc(size_t size, size_t align) {
  if (!initialised) init();
  if (align < GRAIN) align = GRAIN;
  /* Reject sizes that would wrap when rounded (Rust never asks for more than isize::MAX). */
  if (size > FW_ARENA_BYTES || (align & (align - 1)) != 0) { failures++; return 0; }
  size = round_up(size == 0 ? 1 : size, GRAIN);
  struct free_node** link = &free_list;
  for (struct free_node* n = free_list; n; link = &n->next, n = n->next) {
    uintptr_t start = (uintptr_t)n, end = start + n->size;
    uintptr_t at = round_up(start, align);
    if (at + size > end) continue;
    struct free_node* next = n->next;
    /* What is left after the block stays free ... */
    if (at + size < end) {
      struct free_node* tail = (struct free_node*)(at + size);
      tail->size = end - (at + size);
      tail->next = next;
      next = tail;
    }
    /* ... and so does the gap before it that alignment skipped. */
    if (at > start) {
      n->size = at - start;
      n->next = next;
    } else {
      *link = next;
    }
    in_use += size;
    if (in_use > peak) peak = in_use;
    return (void*)at;
  }
  failures++;
  return 0;
}

void mlx_arm_platform_free(void* ptr, size_t size, size_t align) {
  (void)align;
  if (!ptr) return;
  size = round_up(size == 0 ? 1 : size, GRAIN);
  in_use -= size;
  struct free_node* block = (struct free_node*)ptr;
  block->size = size;
  struct free_node* prev = 0;
  struct free_node* n = free_list;
  while (n && n < block) { prev = n; n = n->next; }
  block->next = n;
  if (prev) prev->next = block; else free_list = block;
  /* Merge with the following and the preceding free region when they touch. */
  if (n && (uintptr_t)block + block->size == (uintptr_t)n) {
    block->size += n->size;
    block->next = n->next;
  }
  if (prev && (uintptr_t)prev + prev->size == (uintptr_t)block) {
    prev->size += block->size;
    prev->next = block->next;
  }
}

/* Called by the library's #[panic_handler] (a library bug, or out of memory outside array
 * buffers). There is no unwinding on bare metal: report and stop the machine. */
void mlx_arm_platform_panic(const char* msg, size_t len) {
  sh_puts("fw: PANIC: ");
  sh_write(msg, len);
  sh_puts("\n");
  semihost_exit(101);
}
