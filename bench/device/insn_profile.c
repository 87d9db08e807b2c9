/* A QEMU TCG plugin that counts, per translated block, the instructions it executes, and at exit
 * writes "ADDRESS INSTRUCTIONS" lines (hex, decimal) for every block that ran to the file named by
 * its argument out=PATH (default insn-profile.txt): bench/device/profile maps them onto the
 * ELF's functions. Declared from QEMU's documented plugin API as bench/device/insn_count.c is.
 *
 *   cc -O2 -shared -fPIC -o libinsn_profile.so bench/device/insn_profile.c
 *   qemu-system-arm ... -plugin ./libinsn_profile.so,out=profile.txt */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t qemu_plugin_id_t;
typedef struct qemu_info_t qemu_info_t;
struct qemu_plugin_tb;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb* tb);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void* userdata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb* tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb* tb);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb* tb, enum qemu_plugin_op op, void* ptr,
                                              uint64_t imm);
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void* userdata);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

struct block {
  uint64_t vaddr, insns, runs;
  struct block* next;
};
static struct block* g_blocks;
static char g_path[512] = "insn-profile.txt";

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb* tb) {
  (void)id;
  struct block* b = calloc(1, sizeof *b);
  if (!b) return;
  b->vaddr = qemu_plugin_tb_vaddr(tb);
  b->insns = qemu_plugin_tb_n_insns(tb);
  b->next = g_blocks;
  g_blocks = b;
  qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &b->runs, 1);
}

static void write_profile(qemu_plugin_id_t id, void* userdata) {
  (void)id;
  (void)userdata;
  FILE* f = fopen(g_path, "w");
  if (!f) return;
  for (struct block* b = g_blocks; b; b = b->next)
    if (b->runs) fprintf(f, "%" PRIx64 " %" PRIu64 "\n", b->vaddr, b->insns * b->runs);
  fclose(f);
}

__attribute__((visibility("default"))) int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t* info,
                                                               int argc, char** argv) {
  (void)info;
  for (int i = 0; i < argc; ++i)
    if (strncmp(argv[i], "out=", 4) == 0) snprintf(g_path, sizeof g_path, "%s", argv[i] + 4);
  qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
  qemu_plugin_register_atexit_cb(id, write_profile, NULL);
  return 0;
}
