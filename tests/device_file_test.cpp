// Device profiles as data: `devices --json NAME` prints a profile in exactly the form
// --device-file reads, so a user's board is that output edited; a malformed file is refused
// in one line naming the field.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>

#include "pocketlm/kernels/kernels.h"
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

// The heap tiers are arenas, not partitions: a PSP-1000's 24 MiB less the program, its stack,
// libcglue's threshold and the port's headroom (src/ports/psp/Makefile); 48 MiB of a
// PSP-2000's 51.
TEST(DeviceFile, PspHeapTiersAreWhatTheirPartitionsLeave) {
  const nlohmann::json psp = builtin("psp"), big = builtin("psp-2000");
  EXPECT_EQ(psp["tiers"][0]["capacity"], 22512 * 1024);
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
      {"zero capacity", [](nlohmann::json& j) { j["tiers"][1]["capacity"] = 0; },
       "tiers[1].capacity: 0 bytes; give the tier's size, or null for unbounded"},
      {"two tiers of one name", [](nlohmann::json& j) { j["tiers"][1]["name"] = j["tiers"][0]["name"]; },
       "tiers[1].name: 'sram' is also tiers[0]'s name"},
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

// A backend compiled in that this CPU cannot run is refused, naming the CPU and what it runs
// (it used to plan with it and silently run another).
TEST(DeviceFile, KernelsThisCpuLacksAreRefused) {
  const char* missing = nullptr;
  for (const char* const* name = kernel_names(); *name; ++name)
    if (!find_kernels(*name)) missing = *name;
  if (!missing) GTEST_SKIP() << "this CPU runs every backend compiled in";
  nlohmann::json profile = builtin("esp32s3");
  profile["name"] = "board";
  profile["kernels"] = missing;
  const std::string file = write_profile(profile);
  const CommandResult r = run_pocketlm({"plan", stories260k(), "-z", tok512(), "--device-file", file});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.rfind("pocketlm: error: " + file + ": kernels: '" + missing + "' needs instructions this CPU (", 0),
            0u)
      << r.err;
  EXPECT_NE(r.err.find("; it runs reference, tiled4"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

#if POCKETLM_HAVE_PNG
// console reads its device twice (the screen, then the session): a board's file works.
TEST(DeviceFile, ConsoleRendersABoardsFile) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  nlohmann::json profile = builtin("psp");
  profile["name"] = "my-psp";
  const std::string file = write_profile(profile), osk = temp_dir() + "/osk.bin";
  write_file(osk, {'H', 0, 'i', 0, 0, 0});
  const std::string png = temp_dir() + "/screen.png";
  const CommandResult r = run_pocketlm(
      {"console", stories260k(), "-z", tok512(), "--device-file", file, "--osk", osk, "--png", png, "-n", "8", "-t", "0"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(file_exists(png));
}
#endif

// --heap with a device is its first RAM tier, without the host process's reserve.
TEST(DeviceFile, HeapWithADeviceIsItsFirstTierAlone) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  const CommandResult r =
      run_pocketlm({"plan", stories260k(), "-z", tok512(), "--device", "esp32s3", "--heap", "300KiB", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json tier = nlohmann::json::parse(r.out)["plan"]["tiers"][0];
  EXPECT_EQ(tier["capacity"], 300 * 1024);
  for (const auto& region : tier["regions"]) EXPECT_NE(region["name"], "process (reserved)") << region.dump();
  const CommandResult host = run_pocketlm({"plan", stories260k(), "-z", tok512(), "--heap", "24MiB", "--json"});
  ASSERT_EQ(host.exit_code, 0) << host.err;
  bool reserved = false;
  const nlohmann::json host_plan = nlohmann::json::parse(host.out);
  for (const auto& region : host_plan["plan"]["tiers"][0]["regions"])
    reserved = reserved || region["name"] == "process (reserved)";
  EXPECT_TRUE(reserved) << host.out;
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
