// Where a command may write: every output is written beside its target and renamed over it
// (apps/pocketlm/output_file.cpp), so a target that is one of the command's inputs (however it
// is spelled) or an existing node that is not a regular file (a FIFO, a directory, a device)
// is refused up front with one line naming it, and is left exactly as it was.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <utility>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "test_support.h"

namespace pocketlm::test {
namespace {

std::string model() { return model_path("stories260K.bin"); }
std::string tok512() { return model_path("tok512.bin"); }

void expect_refused(const std::vector<std::string>& args, const std::vector<std::string>& needles) {
  const CommandResult r = run_pocketlm(args);
  std::string cmd = "pocketlm";
  for (const std::string& a : args) cmd += " " + a;
  SCOPED_TRACE(cmd);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.err.rfind("pocketlm: error: ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  for (const std::string& n : needles) EXPECT_NE(r.err.find(n), std::string::npos) << "missing '" << n << "': " << r.err;
  EXPECT_EQ(r.out, "");
}

bool is_fifo(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0 && S_ISFIFO(st.st_mode);
}

// A directory holding copies of the model and the tokenizer, a folder symlinked to it and a
// hard link to the model: the same files under other names.
struct Inputs {
  std::string dir = temp_dir();
  std::string model = dir + "/m.bin", tok = dir + "/tok.bin";
  Inputs() {
    write_file(model, read_file(pocketlm::test::model()));
    write_file(tok, read_file(tok512()));
    EXPECT_EQ(::symlink(dir.c_str(), (dir + "-link").c_str()), 0);
    EXPECT_EQ(::link(model.c_str(), (dir + "/hard.bin").c_str()), 0);
  }
  ~Inputs() { ::unlink((dir + "-link").c_str()); }
};

TEST(OutputPath, ConvertRefusesItsInputHoweverSpelled) {
  Inputs in;
  const std::string before = sha256_of(in.model), tok_before = sha256_of(in.tok);
  for (const std::string& out : {in.model, in.dir + "/./m.bin", in.dir + "-link/m.bin", in.dir + "/hard.bin"}) {
    expect_refused({"convert", in.model, "--to", "q80", "-o", out},
                   {"-o " + out, "same file as the input model " + in.model});
    expect_refused({"convert", in.model, "--to", "gguf", "-o", out}, {"-o " + out, "input model " + in.model});
  }
  // The tokenizer embedded into a GGUF file is an input too.
  expect_refused({"convert", in.model, "--to", "gguf", "-z", in.tok, "-o", in.dir + "-link/tok.bin"},
                 {"-o " + in.dir + "-link/tok.bin", "input -z " + in.tok});
  EXPECT_EQ(sha256_of(in.model), before);
  EXPECT_EQ(sha256_of(in.tok), tok_before);
  std::vector<std::string> names = directory_entries(in.dir);
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"hard.bin", "m.bin", "tok.bin"}));  // no temporaries left
}

TEST(OutputPath, TokenLogRefusesTheModelAndTheTokenizer) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  Inputs in;
  const std::string before = sha256_of(in.tok);
  expect_refused({"run", in.model, "-z", in.tok, "-n", "4", "--token-log", in.dir + "-link/tok.bin"},
                 {"--token-log " + in.dir + "-link/tok.bin", "input -z " + in.tok});
  expect_refused({"run", in.model, "-z", in.tok, "-n", "4", "--token-log", in.model}, {"input model " + in.model});
  EXPECT_EQ(sha256_of(in.tok), before);
}

// A FIFO (as a device node such as /dev/null would, for root) would be replaced by a regular
// file; a directory would fail only at the rename, after all the work.
TEST(OutputPath, EveryWriterRefusesANodeThatIsNotARegularFile) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  const std::string dir = temp_dir(), fifo = dir + "/fifo", sub = dir + "/sub";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  ASSERT_EQ(::mkdir(sub.c_str(), 0755), 0);
  const std::string osk = dir + "/osk.bin";
  write_file(osk, {'H', 0, 'i', 0, 0, 0});
  for (const std::string& target : {fifo, sub}) {
    const std::string kind = target == fifo ? "(a FIFO)" : "(a directory)";
    const std::vector<std::string> needles = {target + ": exists and is not a regular file " + kind,
                                              "pocketlm replaces only regular files"};
    std::vector<std::string> with_o = needles;
    with_o[0] = "-o " + with_o[0];
    expect_refused({"synth", "stories260K", "--seed", "1", "-o", target}, with_o);
    expect_refused({"convert", model(), "--to", "q80", "-o", target}, with_o);
    expect_refused({"convert", model(), "--to", "gguf", "-z", tok512(), "-o", target}, with_o);
    std::vector<std::string> log = needles;
    log[0] = "--token-log " + log[0];
    expect_refused({"run", model(), "-z", tok512(), "-n", "4", "--token-log", target}, log);
#if POCKETLM_HAVE_PNG
    std::vector<std::string> png = needles;
    png[0] = "--png " + png[0];
    expect_refused({"console", model(), "-z", tok512(), "--osk", osk, "--png", target, "-n", "4"}, png);
#endif
  }
  EXPECT_TRUE(is_fifo(fifo));
  EXPECT_TRUE(directory_entries(sub).empty());
  std::vector<std::string> names = directory_entries(dir);
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"fifo", "osk.bin", "sub"}));
}

// A symlink to a file is written through: the target gets the output, the link stays a link
// (convert's model and run's token log alike); an existing target keeps its mode.
TEST(OutputPath, ASymlinkIsWrittenThroughAndKept) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  const std::string dir = temp_dir(), real = dir + "/real.bin", link = dir + "/latest.bin";
  write_file(real, {'o', 'l', 'd'});
  ASSERT_EQ(::chmod(real.c_str(), 0600), 0);
  ASSERT_EQ(::symlink("real.bin", link.c_str()), 0);
  const CommandResult r = run_pocketlm({"convert", model(), "--to", "q80", "-o", link});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  struct stat st;
  ASSERT_EQ(::lstat(link.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  ASSERT_EQ(::stat(real.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_GT(st.st_size, 1000);
  const std::string log = dir + "/log.txt", log_link = dir + "/log-link.txt";
  write_file(log, {'x'});
  ASSERT_EQ(::symlink(log.c_str(), log_link.c_str()), 0);
  const CommandResult run = run_pocketlm({"run", model(), "-z", tok512(), "-n", "4", "-t", "0", "--token-log", log_link});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(read_text(log).rfind("prompt: 1\n", 0), 0u) << read_text(log);
  ASSERT_EQ(::lstat(log_link.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  std::vector<std::string> names = directory_entries(dir);
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"latest.bin", "log-link.txt", "log.txt", "real.bin"}));
}

// A link to a process's open file (/dev/stdout -> /proc/self/fd/1: the rename would replace
// the shell's redirect target, or, as root, the system's /dev/stdout) and a dangling link are
// refused in one line and left as they were; `--token-log -` is stdout.
TEST(OutputPath, LinksToOpenFilesAndDanglingLinksAreRefused) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  const std::string dir = temp_dir(), fd_link = dir + "/fd1", dangling = dir + "/dangling";
  ASSERT_EQ(::symlink("/proc/self/fd/1", fd_link.c_str()), 0);
  ASSERT_EQ(::symlink("missing.txt", dangling.c_str()), 0);
  for (const std::string& target : {fd_link, std::string("/dev/stdout")})
    expect_refused({"run", model(), "-z", tok512(), "-n", "4", "--token-log", target},
                   {"--token-log " + target + ": is a symlink to /proc/self/fd/1", "- for stdout"});
  expect_refused({"run", model(), "-z", tok512(), "-n", "4", "--token-log", dangling},
                 {"--token-log " + dangling + ": is a symlink to a missing file"});
  expect_refused({"convert", model(), "--to", "q80", "-o", dangling}, {"-o " + dangling + ": is a symlink to a missing"});
  struct stat st;
  for (const std::string& link : {fd_link, dangling, std::string("/dev/stdout")}) {
    ASSERT_EQ(::lstat(link.c_str(), &st), 0) << link;
    EXPECT_TRUE(S_ISLNK(st.st_mode)) << link;
  }
  EXPECT_FALSE(file_exists(dir + "/missing.txt"));
  const CommandResult r = run_pocketlm({"run", model(), "-z", tok512(), "-n", "4", "-t", "0", "--token-log", "-"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\nprompt: 1\n"), std::string::npos) << r.out;
}

// A new output honours the umask (mkstemp alone would make it 0600).
TEST(OutputPath, ANewOutputHonoursTheUmask) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin");
  const std::string dir = temp_dir();
  for (const auto& [mask, want] : {std::pair{022u, 0644u}, std::pair{077u, 0600u}, std::pair{002u, 0664u}}) {
    const std::string out = dir + "/m" + std::to_string(mask) + ".bin";
    const std::string cmd = "umask " + std::to_string(mask / 64) + std::to_string(mask / 8 % 8) +
                            std::to_string(mask % 8) + "; exec " + emulator_prefix() + "'" + pocketlm_binary() +
                            "' convert '" + model() + "' --to q80 -o '" + out + "' >/dev/null 2>&1";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    struct stat st;
    ASSERT_EQ(::stat(out.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, want) << "umask " << mask;
  }
}

#if POCKETLM_HAVE_PNG
// The per-turn frames are outputs too, checked before the first turn is generated.
TEST(OutputPath, ConsoleChecksEveryFrameBeforeTheFirstTurn) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  const std::string dir = temp_dir();
  const std::string osk = dir + "/osk.bin";
  write_file(osk, {'H', 0, 'i', 0, 0, 0, 'Y', 0, 'o', 0, 0, 0});
  ASSERT_EQ(::mkfifo((dir + "/s-2.png").c_str(), 0644), 0);
  expect_refused({"console", model(), "-z", tok512(), "--osk", osk, "--png", dir + "/s.png", "-n", "4"},
                 {"--png " + dir + "/s-2.png: exists and is not a regular file (a FIFO)"});
  EXPECT_FALSE(file_exists(dir + "/s-1.png"));
  // The script is an input: its own name is not a frame to write over.
  expect_refused({"console", model(), "-z", tok512(), "--osk", osk, "--png", osk, "-n", "4"},
                 {"--png " + osk + ": is the same file as the input --osk " + osk});
}

TEST(OutputPath, ConsoleInAMissingDirectoryFailsBeforeTheFirstTurn) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  const std::string dir = temp_dir();
  const std::string osk = dir + "/osk.bin";
  write_file(osk, {'H', 0, 'i', 0, 0, 0});
  const std::string png = dir + "/missing/s.png";
  // No "> Hi" on stdout: nothing was generated before the error.
  expect_refused({"console", model(), "-z", tok512(), "--osk", osk, "--png", png, "-n", "4"},
                 {"--png: cannot create " + png, "No such file"});
  EXPECT_FALSE(file_exists(dir + "/missing"));
}
#endif

}  // namespace
}  // namespace pocketlm::test
