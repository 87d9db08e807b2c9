/* A QEMU TCG plugin that counts the guest instructions a run executes, exactly, and prints the
 * total when the program exits: "insn_count: N instructions". Instructions are counted per
 * translated block (an inline add of the block's length each time it runs), so a block left
 * early by an exception is counted whole (rare in the engine's code).
 *
 * Debian's QEMU (7.2) is built with plugin support but ships neither plugins nor their header,
 * so the few entry points used are declared here from the documented API
 * (https://qemu.readthedocs.io/en/v7.2.0/devel/tcg-plugins.html, plugin API version 1).
 *
 *   cc -O2 -shared -fPIC -o libinsn_count.so bench/device/insn_count.c
 *   qemu-system-arm ... -plugin ./libinsn_count.so -d plugin      (or qemu-mipsel, dynamic)
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef uint64_t qemu_plugin_id_t;
typedef struct qemu_info_t qemu_info_t; /* not read */
struct qemu_plugin_tb;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb* tb);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void* userdata);

size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb* tb);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb* tb, enum qemu_plugin_op op, void* ptr,
                                              uint64_t imm);
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void* userdata);
void qemu_plugin_outs(const char* string);

/* QEMU refuses a plugin that does not export the API version it was written against. */
__attribute__((visibility("default"))) int qemu_plugin_version = 1;

/* One counter: the boards and user-mode programs counted here run one vCPU. */
static uint64_t g_instructions;

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb* tb) {
  (void)id;
  qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &g_instructions,
                                           qemu_plugin_tb_n_insns(tb));
}

static void on_exit(qemu_plugin_id_t id, void* userdata) {
  (void)id;
  (void)userdata;
  char line[64];
  snprintf(line, sizeof line, "insn_count: %" PRIu64 " instructions\n", g_instructions);
  qemu_plugin_outs(line);
}

__attribute__((visibility("default"))) int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t* info,
                                                               int argc, char** argv) {
  (void)info;
  (void)argc;
  (void)argv;
  qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
  qemu_plugin_register_atexit_cb(id, on_exit, NULL);
  return 0;
}
