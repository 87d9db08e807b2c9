// The Llama-2 decoder of llama2.c (RMSNorm, RoPE, grouped-query attention, SwiGLU FFN): the
// forward pass of run.c (fp32) and runq.c (q80), built from the shared blocks; everything
// around the layers is the Decoder's.
#pragma once

#include "pocketlm/model/decoder.h"

namespace pocketlm {

class LlamaModel final : public Decoder {
 protected:
  void layers(const std::int32_t* tokens, const TokenRows& r, int pos) override;
};

}  // namespace pocketlm
