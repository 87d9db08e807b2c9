// WeightStream: the matrices that stay in storage, read once per token through bounded
// buffers in the arena, in forward-pass order. Each matrix is cut into blocks of rows (a
// multiple of 32, about WeightPlacement::block_bytes each); while the kernels compute one
// block, the ReadQueue brings in the next (on a port whose reads overlap compute), into the
// other of two read buffers. A block is repacked into the backend's row layout as it arrives
// and its floats are checked, as at load time. No allocation, no read beyond the blocks a
// token needs: the bytes read per token are exactly the streamed matrices' bytes.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "pocketlm/base/status.h"
#include "pocketlm/format/model_spec.h"
#include "pocketlm/io/read_queue.h"
#include "pocketlm/io/storage.h"
#include "pocketlm/kernels/kernels.h"
#include "pocketlm/memory/arena.h"
#include "pocketlm/model/weight_placement.h"
#include "pocketlm/quant/matrix.h"

namespace pocketlm {

inline constexpr const char* kStreamRegion = "stream buffers";

// How a streamed matrix is cut: rows per block (a multiple of kStreamBlockAlign of about
// `block_bytes`, at least that, at most all rows), the bytes of one block (values and scales),
// and whether the backend repacks its rows (in place in the read buffer, through a scratch of
// one interleaved block of rows). The read buffers are sized by the largest block of all
// streamed matrices. Blocks keep whole multiples of kStreamBlockAlign rows, the row alignment
// every backend and the worker split use.
inline constexpr int kStreamBlockAlign = 32;
struct StreamBlock {
  int rows = 0;
  std::uint64_t bytes = 0;
  int interleave = 1;  // the backend's row layout for the type
  bool repacks = false;
  std::uint64_t scratch = 0;  // bytes of one interleaved block of rows (values and scales) if it repacks
};
StreamBlock stream_block(const TensorInfo& t, std::size_t block_bytes, const Kernels& kernels);

// One streamed matrix: where it is in the file and how it is cut.
struct StreamedMatrix {
  TensorInfo info;
  int interleave = 1;  // the backend's row layout for this type
  int block_rows = 0;  // rows per block (a multiple of 32, or all rows)
  int index = 0;       // position in forward-pass order
};

class WeightStream {
 public:
  // Lists the matrices `placement` streams in forward-pass order (layer by layer, each layer's
  // in its roles' order: wq wk wv wo w1 w3 w2; then the classifier), cuts each into blocks of about
  // placement.block_bytes, and carves the table, two read buffers and, when the backend
  // repacks rows, the scratch of one interleaved block of rows.
  Status carve(const ModelSpec& spec, const WeightPlacement& placement, const Kernels& kernels, Arena& arena);
  // The streamed matrix of `role` and `layer` (-1 for the classifier), or nullptr.
  const StreamedMatrix* find(TensorRole role, int layer) const;
  int count() const { return count_; }
  // The i-th streamed matrix in forward-pass order, i < count() (after a carve into a real arena).
  const StreamedMatrix& matrix(int i) const { return table_[i]; }

  // Reads go to `storage` through `queue`, at most `chunk_bytes` per Storage::read.
  void bind(Storage* storage, ReadQueue* queue, std::size_t chunk_bytes);
  // Starts reading the first block of the token (called when a token's forward pass begins).
  // Without `classifier` the pass ends with the last layer: the streamed classifier is not
  // read ahead (if asked for anyway, it is read then, out of order).
  void begin_token(bool classifier = true);
  // Rows [r0, r0 + block) of `m` in the backend's layout, valid until the next call; starts
  // the read of the block after it. A failed read or a non-finite weight returns zeros and
  // sets status().
  Matrix rows(const StreamedMatrix& m, int r0);
  // Waits for a read in flight (before another reader uses the storage, or at the end).
  void settle();
  Status status() const { return status_; }
  // Forgets the error of an earlier call (after settle()), so that the next token reads again.
  void clear_status() { status_ = Status(); }
  // A flag another thread may set: a non-zero value stops the stream at its next block (the
  // pass then computes on zeros and status() says kAborted). nullptr: none.
  void set_abort(const std::atomic<int>* flag) { abort_ = flag; }

 private:
  struct Block {
    int matrix = -1;
    int r0 = 0;
  };
  Block next_after(Block b) const;
  void submit(Block b, int slot);
  // Completes block `b` into buffer `slot` (waiting or reading as needed); false on error.
  bool fetch(Block b, int* slot);

  StreamedMatrix* table_ = nullptr;
  int count_ = 0;
  int end_ = 0;  // matrices this pass reads ahead: count_, or count_ - 1 without the classifier
  unsigned char* raw_values_[2] = {};
  float* raw_scales_[2] = {};
  unsigned char* scratch_values_ = nullptr;  // one interleaved block of rows, copied out to repack
  float* scratch_scales_ = nullptr;
  Storage* storage_ = nullptr;
  ReadQueue* queue_ = nullptr;
  InlineReadQueue inline_queue_;
  std::size_t chunk_bytes_ = 64 * 1024;
  Block in_flight_;   // submitted, not waited for
  int in_flight_slot_ = 0;
  Block completed_;   // read into completed_slot_, not yet served
  int completed_slot_ = 0;
  Status status_;
  const std::atomic<int>* abort_ = nullptr;
};

}  // namespace pocketlm
