// Device profiles as data: `devices --json NAME` prints a profile in exactly the form
// --device-file reads, so a user's board is that output edited; a malformed file is refused
// in one line naming the field.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>

#include "test_support.h"

namespace pocketlm::test {
namespace {

std::string stories260k() { return model_path("stories260K.bin"); }
std::string tok512() { return model_path("tok512.bin"); }

nlohmann::json builtin(const std::string& name) {
  const CommandResult r = run_pocketlm({"devices", name, "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

std::string write_profile(const nlohmann::json& j) {
  const std::string path = temp_dir() + "/board.json";
  const std::string text = j.dump(2);
  write_file(path, std::vector<unsigned char>(text.begin(), text.end()));
  return path;
}

TEST(DeviceFile, ABuiltinProfileReadBackPlansTheSame) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  for (const char* name : {"host", "psp", "psp-2000", "esp32s3"}) {
    SCOPED_TRACE(name);
    nlohmann::json profile = builtin(name);
    profile["name"] = std::string(name) + "-copy";
    const std::string file = write_profile(profile);
    const CommandResult a = run_pocketlm({"plan", stories260k(), "-z", tok512(), "--device", name});
    const CommandResult b = run_pocketlm({"plan", stories260k(), "-z", tok512(), "--device-file", file});
    ASSERT_EQ(a.exit_code, 0) << a.err;
    ASSERT_EQ(b.exit_code, 0) << b.err;
    EXPECT_EQ(a.out, b.out);
  }
}

TEST(DeviceFile, Esp32WithTwoMiBOfPsramPlans) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  nlohmann::json profile = builtin("esp32s3");
  profile["name"] = "esp32s3-2m";
  profile["tiers"][1]["capacity"] = 2 * 1024 * 1024;
  const std::string file = write_profile(profile);
  const CommandResult r = run_pocketlm({"plan", stories260k(), "-z", tok512(), "--device-file", file, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json plan = nlohmann::json::parse(r.out);
  EXPECT_EQ(plan["device"], "esp32s3-2m");
  EXPECT_EQ(plan["plan"]["tiers"][1]["capacity"], 2 * 1024 * 1024);
  EXPECT_LE(plan["plan"]["tiers"][1]["total"].get<long long>(), 2 * 1024 * 1024);
  // The edited board runs too, with its kernels.
  const CommandResult run = run_pocketlm({"run", stories260k(), "-z", tok512(), "--device-file", file, "-n", "8", "-t", "0"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("kernels tiled4"), std::string::npos) << run.err;
}

TEST(DeviceFile, PspTwoThousandHasTwiceTheHeap) {
  const nlohmann::json psp = builtin("psp"), big = builtin("psp-2000");
  EXPECT_EQ(psp["tiers"][0]["capacity"], 24 * 1024 * 1024);
  EXPECT_EQ(big["tiers"][0]["capacity"], 48 * 1024 * 1024);
  EXPECT_NE(big["tiers"][0]["source"].get<std::string>().find("MEMSIZE=1"), std::string::npos);
}

struct Bad {
  const char* what;
  void (*edit)(nlohmann::json&);
  const char* message;  // after "<file>: "
};

TEST(DeviceFile, MalformedProfilesAreRefusedNamingTheField) {
  const Bad cases[] = {
      {"missing capacity", [](nlohmann::json& j) { j["tiers"][1].erase("capacity"); },
       "tiers[1].capacity: missing (bytes, or null for unbounded)"},
      {"negative capacity", [](nlohmann::json& j) { j["tiers"][0]["capacity"] = -5; },
       "tiers[0].capacity: -5 is negative (bytes, or null for unbounded)"},
      {"fractional capacity", [](nlohmann::json& j) { j["tiers"][0]["capacity"] = 1.5; },
       "tiers[0].capacity: 1.5 is not a whole number (bytes, or null for unbounded)"},
      {"negative bandwidth", [](nlohmann::json& j) { j["tiers"][2]["read_bytes_per_s"] = -1.0; },
       "tiers[2].read_bytes_per_s: -1.0 is negative"},
      {"storage first", [](nlohmann::json& j) { j["tiers"][0]["storage"] = true; },
       "tiers[0]: is storage; the first tier must be RAM (the arena's)"},
      {"unknown kernels", [](nlohmann::json& j) { j["kernels"] = "vfpu"; },
       "kernels: 'vfpu' is not a kernel backend of this build (see pocketlm --version)"},
      {"reserve over capacity", [](nlohmann::json& j) { j["tiers"][2]["reserved_bytes"] = 1ull << 40; },
       "tiers[2].reserved_bytes: 1099511627776 exceeds the capacity 16777216"},
      {"name clash", [](nlohmann::json&) {}, "name: 'esp32s3' is a built-in profile; give the board a name of its own"},
      {"no compute", [](nlohmann::json& j) { j.erase("compute"); }, "compute: missing"},
      {"tiny screen", [](nlohmann::json& j) { j["screen"]["width"] = 4; },
       "screen.width: 4 pixels is outside [8, 4096]"},
  };
  for (const Bad& c : cases) {
    SCOPED_TRACE(c.what);
    nlohmann::json profile = builtin("esp32s3");
    if (std::string(c.what) != "name clash") profile["name"] = "board";
    c.edit(profile);
    const std::string file = write_profile(profile);
    const CommandResult r = run_pocketlm({"plan", stories260k(), "-z", tok512(), "--device-file", file});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(r.err, "pocketlm: error: " + file + ": " + c.message + "\n");
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

TEST(DeviceFile, NotJsonOrMissingOrBothFlags) {
  const std::string file = temp_dir() + "/board.json";
  write_file(file, {'{', 'x'});
  CommandResult r = run_pocketlm({"plan", stories260k(), "-z", tok512(), "--device-file", file});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "pocketlm: error: " + file + ": not valid JSON\n");
  r = run_pocketlm({"plan", stories260k(), "-z", tok512(), "--device-file", file + ".absent"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "pocketlm: error: " + file + ".absent: cannot open --device-file file: No such file or directory\n");
  // A directory is refused in one line (std::ifstream threw on it: an abort).
  r = run_pocketlm({"plan", stories260k(), "-z", tok512(), "--device-file", temp_dir()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--device-file path is a directory, not a regular file"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  r = run_pocketlm({"plan", stories260k(), "-z", tok512(), "--device", "psp", "--device-file", file});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("give one of them"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace pocketlm::test
