// Fuzzes the command line: the input is split at '\n' into argv words and run through
// pocketlm::cli::run_cli, restricted so a run is short and touches no file outside a temp
// dir. The first byte picks the command (plan, inspect or run); the words "@0".."@3" become
// the shared models (stories260K.bin, stories260K_q80.bin, tok512.bin, tokenizer.bin); any
// other word with a '/' and any --token-log (the only flag that writes) reject the input;
// run gets "--seq-len 8" appended, which caps -n. The process works in a fresh temp dir
// holding tok512.bin as tokenizer.bin (run's default -z), with stdin at /dev/null: `run -m chat`
// reads its messages from stdin and must meet the end of input, never wait for a terminal.
#include <unistd.h>

#include <string>
#include <vector>

#include "commands.h"
#include "fuzz_common.h"

using namespace pocketlm;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const std::vector<unsigned char>& tok = fuzz::shared_file("tok512.bin");
  for (const char* m : {"stories260K.bin", "stories260K_q80.bin", "tok512.bin", "tokenizer.bin"})
    fuzz::shared_file(m);  // abort early when a model is missing
  char dir[] = "/tmp/pocketlm-fuzz-cli-XXXXXX";
  if (!mkdtemp(dir) || chdir(dir) != 0) std::abort();
  if (!std::freopen("/dev/null", "r", stdin)) std::abort();
  std::FILE* f = std::fopen("tokenizer.bin", "wb");
  if (!f || std::fwrite(tok.data(), 1, tok.size(), f) != tok.size() || std::fclose(f) != 0) std::abort();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1 || size > 512) return 0;
  static const char* kCommands[] = {"plan", "inspect", "run"};
  static const char* kModels[] = {"stories260K.bin", "stories260K_q80.bin", "tok512.bin", "tokenizer.bin"};
  const char* command = kCommands[data[0] % 3];
  std::vector<std::string> words = {"pocketlm", command};
  std::string word;
  for (std::size_t i = 1; i <= size; ++i) {
    if (i == size || data[i] == '\n') {
      if (word.size() == 2 && word[0] == '@' && word[1] >= '0' && word[1] <= '3')
        word = fuzz::model_path(kModels[word[1] - '0']);
      else if (word.find('/') != std::string::npos || word.rfind("--to", 0) == 0)
        return 0;
      words.push_back(word);
      word.clear();
    } else {
      word.push_back(static_cast<char>(data[i]));
    }
  }
  if (words[1] == std::string("run")) {
    words.push_back("--seq-len");
    words.push_back("8");
  }
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  pocketlm::cli::run_cli(static_cast<int>(words.size()), argv.data());
  return 0;
}
