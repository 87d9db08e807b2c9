// How up to three matmuls of one job are cut into tasks for the workers, each task a whole
// multiple of 32 rows, so every backend's row blocks stay whole (interleave 4, 8 or 16, 8 rows
// per q8_0 step) and each row is computed by the same code whatever the worker count. Tasks are
// taken dynamically: a worker that is late leaves its task to the others. Shared by the
// single-token and the batched (prefill) dispatch, which choose how many tasks per worker.
#pragma once

namespace pocketlm {

struct RowSplit {
  static constexpr int kRowAlign = 32;
  int blocks[3] = {};  // tasks of each op
  int rows[3] = {};    // rows per task of each op
  int tasks = 0;

  // Cuts ops of rows[0..count) (count <= 3) into about `per_worker` tasks each per worker.
  RowSplit(const int* op_rows, int count, int workers, int per_worker) {
    const int parts = per_worker * workers;
    for (int i = 0; i < count; ++i) {
      int r = (op_rows[i] + parts - 1) / parts;
      r = (r + kRowAlign - 1) / kRowAlign * kRowAlign;
      rows[i] = r;
      blocks[i] = (op_rows[i] + r - 1) / r;
      tasks += blocks[i];
    }
  }
  // Task `task` is rows [*r0, *r1) of op *op (whose matrix has `op_rows` rows).
  void locate(int task, const int* op_rows, int* op, int* r0, int* r1) const {
    int i = 0;
    while (task >= blocks[i]) task -= blocks[i++];
    *op = i;
    *r0 = task * rows[i];
    *r1 = *r0 + rows[i] < op_rows[i] ? *r0 + rows[i] : op_rows[i];
  }
};

}  // namespace pocketlm
