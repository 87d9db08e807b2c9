#include "pocketlm/format/tensor_role.h"

#include <cstring>

#include "pocketlm/base/format.h"

namespace pocketlm {

void layer_role_names(const char* region_name, char* out, std::size_t cap) {
  std::size_t used = 0;
  if (cap) out[0] = '\0';
  for (const RoleInfo& r : kRoleTable) {
    if (!r.per_layer || std::strcmp(r.region, region_name) != 0) continue;
    const std::size_t n = format_to(out + used, cap - used, "%s%s", used ? " " : "", r.name);
    used = used + n < cap ? used + n : cap - 1;
  }
}

void gguf_tensor_name(TensorRole role, int layer, char* out, std::size_t cap) {
  const char* g = role_info(role).gguf_name;
  if (layer >= 0)
    format_to(out, cap, "blk.%d%s", layer, g + 6);  // + 6: after "blk.%d"
  else
    format_to(out, cap, "%s", g);
}

}  // namespace pocketlm
