#include "pocketlm/format/tensor_role.h"

#include "pocketlm/base/format.h"

namespace pocketlm {

void gguf_tensor_name(const RoleInfo& role, int layer, char* out, std::size_t cap) {
  const char* g = role.gguf_name;
  if (layer >= 0)
    format_to(out, cap, "blk.%d%s", layer, g + 6);  // + 6: after "blk.%d"
  else
    format_to(out, cap, "%s", g);
}

}  // namespace pocketlm
