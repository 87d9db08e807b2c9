#include "chat_setup.h"

#include <ctime>

#include "runc_flags.h"

namespace pocketlm::cli {

Status parse_chat_sampling(const std::string& t, const std::string& p, const std::string& s, const std::string& n,
                           ChatSetup* out) {
  std::string warning;
  POCKETLM_TRY(runc_temperature("-t", t, &out->params.temperature, &warning));
  if (!warning.empty()) out->warnings.push_back(warning);
  POCKETLM_TRY(runc_topp("-p", p, &out->params.topp, &warning));
  if (!warning.empty()) out->warnings.push_back(warning);
  runc_seed("-s", s, static_cast<unsigned int>(std::time(nullptr)), &out->params.seed, &warning);
  if (!warning.empty()) out->warnings.push_back(warning);
  long long steps = 0;
  POCKETLM_TRY(parse_int("-n", n, 0, 1 << 30, &steps));
  out->max_reply = static_cast<int>(steps);
  return Status();
}

Status open_chat_session(const std::string& model_path, const std::string& tokenizer_flag, SessionOptions options,
                         FileStorage* model, FileStorage* tokenizer_file, Session* session) {
  POCKETLM_TRY(model->open(model_path.c_str(), "model"));
  Storage* tokenizer = nullptr;
  std::string label;
  POCKETLM_TRY(open_tokenizer(tokenizer_flag, model_path, tokenizer_file, &tokenizer, &label));
  options.chat = true;
  const Status st = session->open(*model, tokenizer, options);
  if (!st.ok() && st.code() == StatusCode::kOutOfMemory && session->plan().size() > 0 && !session->plan().fits())
    print_plan(session->plan(), stderr);
  return st;
}

}  // namespace pocketlm::cli
