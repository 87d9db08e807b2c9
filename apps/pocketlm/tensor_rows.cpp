#include "tensor_rows.h"

#include <cmath>
#include <cstdio>

#include "pocketlm/quant/tensor_type.h"

namespace pocketlm::cli {

std::size_t TensorRows::rows_per_read(const TensorInfo& t) {
  const auto cols = static_cast<std::size_t>(t.cols);
  return cols >= 65536 ? 1 : 65536 / cols;
}

Status TensorRows::read(const TensorInfo& t, std::uint64_t row, std::size_t n, const float** values,
                        std::uint64_t* bytes_read) {
  const auto cols = static_cast<std::size_t>(t.cols);
  // Rows are whole blocks of every type (the readers check it), so a row starts a block.
  const std::size_t rv = row_value_bytes(t.type, cols, t.group), rs = row_scale_bytes(t.type, cols, t.group);
  const std::size_t count = n * cols;
  raw_.resize(n * rv);
  scales_.resize(n * rs / sizeof(float) + 1);
  f32_.resize(count);
  POCKETLM_TRY(in_.read(t.offset + row * rv, raw_.data(), raw_.size()));
  if (rs) POCKETLM_TRY(in_.read(t.scales_offset() + row * rs, scales_.data(), n * rs));
  type_traits(t.type).dequantize(raw_.data(), rs ? scales_.data() : nullptr, static_cast<int>(count), t.group,
                                 f32_.data());
  for (std::size_t i = 0; i < count; ++i) {
    if (std::isfinite(f32_[i])) continue;
    const char* what = std::isnan(f32_[i]) ? "NaN" : f32_[i] > 0 ? "+inf" : "-inf";
    return Status::error(StatusCode::kBadFormat, "%s: tensor %s element %llu is %s; convert refuses non-finite weights",
                         in_.name(), name(t).c_str(), static_cast<unsigned long long>(row * t.cols + i), what);
  }
  *values = f32_.data();
  *bytes_read = raw_.size() + n * rs;
  return Status();
}

std::string TensorRows::name(const TensorInfo& t) const {
  char buf[64];
  if (spec_.format == ModelFormat::kGguf)
    gguf_tensor_name(*t.schema, t.layer, buf, sizeof buf);
  else if (t.layer >= 0)
    std::snprintf(buf, sizeof buf, "%s (layer %d)", t.schema->name, t.layer);
  else
    std::snprintf(buf, sizeof buf, "%s", t.schema->name);
  return buf;
}

}  // namespace pocketlm::cli
