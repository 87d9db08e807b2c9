// TensorRows: the tensors of a model file read for conversion a few whole rows at a time,
// dequantized to f32 by their own type (quant/tensor_type.h: f32, q80, f16, q8_0, q4_0, iq4_xs), so
// that every converter sees the same floats whatever the input stores. A NaN or infinity
// (in a value or a block scale) is an error: quantizing would turn it into an ordinary number.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "pocketlm/format/model_spec.h"
#include "pocketlm/io/storage.h"

namespace pocketlm::cli {

class TensorRows {
 public:
  // `spec` is the input's (for tensor names in messages).
  TensorRows(Storage& in, const ModelSpec& spec) : in_(in), spec_(spec) {}

  // Whole rows per read for about 64K values (at least one row).
  static std::size_t rows_per_read(const TensorInfo& t);
  // Rows [row, row + n) of t as n * t.cols floats in *values (valid until the next read);
  // *bytes_read is what they take in the file. Error on a non-finite value, naming the file,
  // the tensor and the element's row-major index.
  Status read(const TensorInfo& t, std::uint64_t row, std::size_t n, const float** values, std::uint64_t* bytes_read);
  // The tensor as messages name it: its GGUF name for a GGUF input, else llama2.c's
  // ("wq (layer 3)").
  std::string name(const TensorInfo& t) const;


 private:
  Storage& in_;
  const ModelSpec& spec_;
  std::vector<unsigned char> raw_;
  std::vector<float> scales_, f32_;
};

}  // namespace pocketlm::cli
