// TensorRows: the tensors of a model file read for conversion a few whole rows at a time,
// dequantized to f32 by their own type (quant/tensor_type.h: f32, q80, f16, q8_0, q4_0), so
// that every converter sees the same floats whatever the input stores.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "pocketlm/format/model_spec.h"
#include "pocketlm/io/storage.h"

namespace pocketlm::cli {

class TensorRows {
 public:
  explicit TensorRows(Storage& in) : in_(in) {}

  // Whole rows per read for about 64K values (at least one row).
  static std::size_t rows_per_read(const TensorInfo& t);
  // Rows [row, row + n) of t as n * t.cols floats in *values (valid until the next read);
  // *bytes_read is what they take in the file.
  Status read(const TensorInfo& t, std::uint64_t row, std::size_t n, const float** values, std::uint64_t* bytes_read);

 private:
  Storage& in_;
  std::vector<unsigned char> raw_;
  std::vector<float> scales_, f32_;
};

}  // namespace pocketlm::cli
