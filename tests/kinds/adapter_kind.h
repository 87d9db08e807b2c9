// The test-only `adapter` kind's roles and its start-up registration (adapter_kind.cpp).
#pragma once

#include "pocketlm/format/architecture.h"

namespace pocketlm::test {

inline constexpr TensorRole kAdapterDown = kind_layer_role(0);  // [adapter_rank, dim]
inline constexpr TensorRole kAdapterUp = kind_layer_role(1);    // [dim, adapter_rank]

// Whether add_model_kind took the kind at start-up.
extern const bool kAdapterAdded;

}  // namespace pocketlm::test
