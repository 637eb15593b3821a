/* A QEMU TCG plugin that counts executed guest instructions and prints the total at exit:
 * `qemu-aarch64 -plugin ./libinsn.so,outfile=... prog` (used by docs/BENCHMARKS.md's aarch64
 * quantized-matmul figures: there is no aarch64 hardware here, so instructions retired under
 * qemu-user are the proxy). Debian's qemu ships plugin support but neither the contrib plugins
 * nor qemu-plugin.h, so the few declarations of QEMU's stable plugin API (version 1, QEMU 7.x)
 * that this file uses are written out below. The counter is one inline add per translated
 * block: exact for single-threaded programs. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef uint64_t qemu_plugin_id_t;
typedef struct qemu_info_t qemu_info_t;
struct qemu_plugin_tb;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };

extern void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
    void (*cb)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb));
extern size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
extern void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb,
    enum qemu_plugin_op op, void *ptr, uint64_t imm);
extern void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id,
    void (*cb)(qemu_plugin_id_t id, void *userdata), void *userdata);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

static uint64_t insns;
static char outfile[512] = "/dev/stderr";

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb) {
  (void)id;
  qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &insns, qemu_plugin_tb_n_insns(tb));
}

static void on_exit(qemu_plugin_id_t id, void *p) {
  (void)id; (void)p;
  FILE *f = fopen(outfile, "w");
  if (f) { fprintf(f, "insns %llu\n", (unsigned long long)insns); fclose(f); }
}

__attribute__((visibility("default"))) int qemu_plugin_install(qemu_plugin_id_t id,
    const qemu_info_t *info, int argc, char **argv) {
  (void)info;
  for (int i = 0; i < argc; i++)
    if (strncmp(argv[i], "outfile=", 8) == 0) snprintf(outfile, sizeof outfile, "%s", argv[i] + 8);
  qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
  qemu_plugin_register_atexit_cb(id, on_exit, NULL);
  return 0;
}
