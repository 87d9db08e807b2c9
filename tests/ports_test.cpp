// The PSP and ESP-IDF ports' logic on the host (src/ports/psp/psp_port.c,
// src/ports/esp_idf/main/esp_port.c, compiled as C): storage through the same callback shapes
// over POSIX files (sceIo's seek and read; esp_partition_read at an offset into a flash image),
// the console into a 512 x 272 framebuffer, OSK strings to a UTF-8 prompt, FCR31, and the
// ports' figures (partitions.csv, the PSP Makefile's heap tiers, esp_port.h) against the device
// profiles they come from.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "esp_port.h"
#include "golden_models.h"
#include "pocketlm/ui/bitmap_font.h"
#include "pocketlm/ui/console.h"
#include "psp_port.h"
#include "test_support.h"

namespace pocketlm {
namespace {

const std::string kSource = POCKETLM_SOURCE_DIR;
const std::string kModel = kSource + "/assets/stories1M.gguf";

nlohmann::json profile(const std::string& name) {
  return nlohmann::json::parse(test::read_text(kSource + "/apps/pocketlm/devices/" + name + ".json"));
}

// Greedy tokens of 24 steps from "Once upon a time" of a session opened on `config` (buffers
// from its plan).
std::vector<int> greedy_tokens(pocketlm_config config) {
  std::vector<unsigned char> memory(pocketlm_session_bytes());
  pocketlm_session* s = nullptr;
  EXPECT_EQ(pocketlm_create(memory.data(), memory.size(), &s), POCKETLM_OK);
  pocketlm_memory_plan plan = {sizeof plan};
  EXPECT_EQ(pocketlm_plan(s, &config, &plan), POCKETLM_OK) << pocketlm_last_error(s);
  std::vector<std::vector<unsigned char>> buffers;
  for (int t = 0; t < plan.tier_count; ++t) {
    if (plan.tiers[t].storage) continue;
    buffers.emplace_back(plan.tiers[t].bytes + POCKETLM_ALIGNMENT);
    config.tier_buffers[t] = buffers.back().data();
    config.tier_buffer_bytes[t] = buffers.back().size();
  }
  std::vector<int> out;
  EXPECT_EQ(pocketlm_open(s, &config), POCKETLM_OK) << pocketlm_last_error(s);
  std::int32_t ids[256];
  int n = 0;
  EXPECT_EQ(pocketlm_encode(s, "Once upon a time", 16, 1, ids, 256, &n), POCKETLM_OK);
  pocketlm_sampler greedy;
  pocketlm_sampler_defaults(&greedy);
  greedy.temperature = 0.0f;
  auto cb = [](void* ctx, std::int32_t token, const char*, std::size_t) {
    static_cast<std::vector<int>*>(ctx)->push_back(token);
    return 0;
  };
  EXPECT_EQ(pocketlm_generate(s, ids, n, 24, &greedy, cb, &out, nullptr), POCKETLM_OK) << pocketlm_last_error(s);
  pocketlm_close(s);
  return out;
}

int memory_read(void* ctx, std::uint64_t offset, void* dst, std::size_t bytes) {
  std::memcpy(dst, static_cast<const unsigned char*>(ctx) + offset, bytes);
  return 0;
}

std::vector<int> reference_tokens() {
  static const std::vector<unsigned char> bytes = test::read_file(kModel);
  pocketlm_config config;
  pocketlm_config_defaults(&config);
  config.model = {memory_read, const_cast<unsigned char*>(bytes.data()), bytes.size(), "memory"};
  return greedy_tokens(config);
}

// sceIo's two calls, emulated with POSIX; the read hands back at most 4093 bytes a call (as a
// short read may) and counts the seeks.
struct HostFile {
  int fd = -1;
  int seeks = 0;
};
std::int64_t host_seek(void* fd, std::int64_t offset) {
  HostFile* f = static_cast<HostFile*>(fd);
  f->seeks++;
  return ::lseek(f->fd, offset, SEEK_SET);
}
int host_read(void* fd, void* dst, std::uint32_t bytes) {
  return static_cast<int>(::read(static_cast<HostFile*>(fd)->fd, dst, bytes > 4093 ? 4093 : bytes));
}

TEST(PspPort, StorageOnAFileThroughSceIoShapedCalls) {
  HostFile host;
  host.fd = ::open(kModel.c_str(), O_RDONLY);
  ASSERT_GE(host.fd, 0);
  psp_file file = {host_seek, host_read, &host, -1, test::read_file(kModel).size()};
  pocketlm_config config;
  psp_config(&config, 25165824);
  config.model = psp_file_storage(&file, "ms0:/model.gguf");
  EXPECT_EQ(greedy_tokens(config), reference_tokens());
  const int seeks = host.seeks;
  EXPECT_GT(seeks, 0);

  // Sequential reads do not seek; a read past the end of the file fails.
  unsigned char a[100], b[100];
  ASSERT_EQ(psp_file_read(&file, 1000, a, 50), 0);
  ASSERT_EQ(psp_file_read(&file, 1050, a + 50, 50), 0);
  EXPECT_EQ(host.seeks, seeks + 1);
  ASSERT_EQ(psp_file_read(&file, 1000, b, 100), 0);
  EXPECT_EQ(std::memcmp(a, b, 100), 0);
  EXPECT_EQ(psp_file_read(&file, file.size - 10, a, 20), -3);
  ::close(host.fd);
}

TEST(PspPort, ConsoleDrawsIntoThe512PixelLines) {
  const std::uint32_t kUntouched = 0x12345678u;
  std::vector<std::uint32_t> vram(PSP_LINE_PIXELS * PSP_SCREEN_HEIGHT, kUntouched);
  std::vector<unsigned char> memory(pocketlm_console_bytes());
  pocketlm_console* console = nullptr;
  ASSERT_EQ(psp_console_open(memory.data(), memory.size(), vram.data(), &console), POCKETLM_OK)
      << pocketlm_last_error(nullptr);
  EXPECT_EQ(pocketlm_console_columns(console), 60);
  EXPECT_EQ(pocketlm_console_rows(console), 34);
  const char text[] = "Once upon a time, caf\xC3\xA9";
  pocketlm_console_write(console, text, sizeof text - 1);

  // The same text drawn by the engine's console into a plain 480-pixel framebuffer.
  std::vector<std::uint32_t> plain(PSP_SCREEN_WIDTH * PSP_SCREEN_HEIGHT);
  Console reference;
  ASSERT_TRUE(reference.init(Framebuffer{plain.data(), PSP_SCREEN_WIDTH, PSP_SCREEN_HEIGHT, PSP_SCREEN_WIDTH},
                             &kConsoleFont, 0xFF000000u, 0xFFFFFFFFu)
                  .ok());
  reference.write(text, sizeof text - 1);
  int lit = 0;
  for (int y = 0; y < PSP_SCREEN_HEIGHT; ++y) {
    for (int x = 0; x < PSP_LINE_PIXELS; ++x) {
      const std::uint32_t p = vram[static_cast<std::size_t>(y) * PSP_LINE_PIXELS + x];
      if (x >= PSP_SCREEN_WIDTH) {
        ASSERT_EQ(p, kUntouched) << "pixel past the screen at " << x << "," << y;
        continue;
      }
      ASSERT_EQ(p, plain[static_cast<std::size_t>(y) * PSP_SCREEN_WIDTH + x]) << x << "," << y;
      lit += p == 0xFFFFFFFFu;
    }
  }
  EXPECT_GT(lit, 100);
  pocketlm_console* none = nullptr;
  EXPECT_EQ(pocketlm_console_create(memory.data(), memory.size(), vram.data(), 4, 272, 512, 0, 0, &none),
            POCKETLM_INVALID_ARGUMENT);
  EXPECT_NE(std::string(pocketlm_last_error(nullptr)).find("framebuffer 4x272"), std::string::npos);
}

TEST(PspPort, OskTextToUtf8Prompt) {
  // "Hé €𝄞" (U+1D11E as a surrogate pair) with the OSK's U+0000, then garbage after it.
  const std::uint16_t osk[] = {'H', 0x00E9, ' ', 0x20AC, 0xD834, 0xDD1E, 0, 'x', 'y'};
  char prompt[64];
  std::size_t len = 0;
  ASSERT_EQ(psp_osk_prompt(osk, 9, prompt, sizeof prompt, &len), POCKETLM_OK) << pocketlm_last_error(nullptr);
  EXPECT_EQ(std::string(prompt, len), "H\xC3\xA9 \xE2\x82\xAC\xF0\x9D\x84\x9E");
  EXPECT_EQ(prompt[len], '\0');
  // No U+0000 within the units: the units end it; an unpaired surrogate is U+FFFD.
  const std::uint16_t cut[] = {'a', 0xD834, 'b'};
  ASSERT_EQ(psp_osk_prompt(cut, 3, prompt, sizeof prompt, &len), POCKETLM_OK);
  EXPECT_EQ(std::string(prompt, len), "a\xEF\xBF\xBD" "b");
  // Too small a buffer: an error, the whole characters that fit kept.
  EXPECT_EQ(psp_osk_prompt(osk, 9, prompt, 4, &len), POCKETLM_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(prompt), "H\xC3\xA9");
}

TEST(PspPort, Fcr31ClearsOnlyTheTrapEnables) {
  // The PSP's default traps invalid, divide-by-zero and overflow (0x0E00); rounding, flags,
  // cause and flush-to-zero bits are kept as they were.
  EXPECT_EQ(psp_fcr31_without_traps(0x00000E00u), 0u);
  EXPECT_EQ(psp_fcr31_without_traps(0x0103FFFFu), 0x0103F07Fu);
  EXPECT_EQ(psp_fcr31_without_traps(0x00000E03u), 0x00000003u);
  EXPECT_EQ(psp_fcr31_without_traps(0x00000000u) & PSP_FCR31_FLUSH_TO_ZERO, 0u);
}

// The model beside the EBOOT, wherever it was started from (argv[0]); the memory stick's path
// when argv[0] says no directory or the path does not fit.
TEST(PspPort, ModelPathFromTheEbootsFolder) {
  char out[64];
  EXPECT_STREQ(psp_model_path("ef0:/PSP/GAME/pocketlm/EBOOT.PBP", out, sizeof out), "ef0:/PSP/GAME/pocketlm/model.gguf");
  EXPECT_STREQ(psp_model_path("ms0:/PSP/GAME/other/EBOOT.PBP", out, sizeof out), "ms0:/PSP/GAME/other/model.gguf");
  EXPECT_STREQ(psp_model_path("host0:/EBOOT.PBP", out, sizeof out), "host0:/model.gguf");
  EXPECT_EQ(psp_model_path("host0:/EBOOT.PBP", out, sizeof out), out);
  EXPECT_STREQ(psp_model_path(nullptr, out, sizeof out), PSP_DEFAULT_MODEL_PATH);
  EXPECT_STREQ(psp_model_path("EBOOT.PBP", out, sizeof out), PSP_DEFAULT_MODEL_PATH);
  EXPECT_STREQ(psp_model_path("", out, sizeof out), PSP_DEFAULT_MODEL_PATH);
  // "ms0:/d/" and "model.gguf" with its NUL: 18 bytes exactly fit, 17 do not (out untouched).
  std::memset(out, 'x', sizeof out);
  EXPECT_STREQ(psp_model_path("ms0:/d/EBOOT.PBP", out, 18), "ms0:/d/model.gguf");
  std::memset(out, 'x', sizeof out);
  EXPECT_STREQ(psp_model_path("ms0:/d/EBOOT.PBP", out, 17), PSP_DEFAULT_MODEL_PATH);
  EXPECT_EQ(out[0], 'x');
}

// VRAM as main.c lays it out: the console's frame, the GU's two frames and its depth buffer
// apart from one another (the GU never draws into the story), all inside the 2 MiB.
TEST(PspPort, VramFramesApartAndInside2MiB) {
  struct Region {
    std::uint32_t offset, bytes;
  };
  const Region regions[] = {{PSP_CONSOLE_FRAME_OFFSET, PSP_FRAME_BYTES},
                            {PSP_GU_DRAW_OFFSET, PSP_FRAME_BYTES},
                            {PSP_GU_DISPLAY_OFFSET, PSP_FRAME_BYTES},
                            {PSP_GU_DEPTH_OFFSET, PSP_DEPTH_BYTES}};
  EXPECT_EQ(PSP_FRAME_BYTES, 512u * 272 * 4);
  for (const Region& a : regions) {
    EXPECT_LE(a.offset + a.bytes, PSP_VRAM_BYTES);
    EXPECT_EQ(a.offset % 16, 0u);
    for (const Region& b : regions)
      if (&a != &b) EXPECT_TRUE(a.offset + a.bytes <= b.offset || b.offset + b.bytes <= a.offset);
  }
}

// The number the Makefile's first `NAME = N` (or ?=, :=) after `from` sets.
std::uint64_t makefile_number(const std::string& makefile, const std::string& name, std::size_t from = 0) {
  std::smatch m;
  const std::string rest = makefile.substr(from);
  const bool found = std::regex_search(rest, m, std::regex("(^|\\n) *" + name + " *[?:]?= *([0-9]+)"));
  EXPECT_TRUE(found) << name;
  return found ? std::stoull(m[2].str()) : 0;
}

// The Makefile's heap tiers are the profiles', and each, with the default headroom, fits what
// the device's user partition leaves besides usersystemlib, the program, the stack and libcglue's
// threshold (the Makefile refuses a larger heap). PSP_LARGE_MEMORY is not set: build.mak writes
// MEMSIZE=1 by default and warns when it is.
TEST(PspPort, MakefileHeapTiersAreTheProfiles) {
  const std::string makefile = test::read_text(kSource + "/src/ports/psp/Makefile");
  const std::uint64_t prx_kb = makefile_number(makefile, "PRX_KB");
  const std::uint64_t headroom_kb = makefile_number(makefile, "HEADROOM_KB");
  EXPECT_EQ(headroom_kb, 512u);
  for (const char* device : {"psp", "psp-2000"}) {
    SCOPED_TRACE(device);
    const std::size_t at = makefile.find(std::string("ifeq ($(DEVICE),") + device + ")");
    ASSERT_NE(at, std::string::npos);
    const std::uint64_t bytes = makefile_number(makefile, "HEAP_TIER_BYTES", at);
    EXPECT_EQ(bytes, profile(device)["tiers"][0]["capacity"].get<std::uint64_t>());
    const std::uint64_t partition_kb = makefile_number(makefile, "PARTITION_KB", at);
    EXPECT_LE(bytes / 1024 + headroom_kb, partition_kb - 16 - prx_kb - 256 - 512);
  }
  EXPECT_EQ(makefile_number(makefile, "PARTITION_KB", makefile.find("ifeq ($(DEVICE),psp)")), 24576u);
  EXPECT_EQ(makefile.find("PSP_LARGE_MEMORY ="), std::string::npos);
}

// The flash image: the firmware's bytes (0xFF, erased), then the model at the model partition's
// offset; esp_partition_read is a pread at the partition's offset into it.
struct FlashImage {
  int fd = -1;
  std::uint32_t offset = 0;
};
int flash_read(const void* partition, std::size_t offset, void* dst, std::size_t bytes) {
  const FlashImage* f = static_cast<const FlashImage*>(partition);
  const ssize_t got = ::pread(f->fd, dst, bytes, static_cast<off_t>(f->offset + offset));
  return got == static_cast<ssize_t>(bytes) ? 0 : -1;
}

// The model partition holds the model file at its start and the tokenizer file after it.
TEST(EspPort, ModelAndTokenizerReadFromAPartitionOfAFlashImage) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  const std::vector<unsigned char> model = test::read_file(test::model_path("stories260K.bin"));
  const std::vector<unsigned char> tokenizer = test::read_file(test::model_path("tok512.bin"));
  // The firmware's part erased, the model, the tokenizer at the next sector, the erased tail.
  const std::size_t tokenizer_at = ESP_TOKENIZER_OFFSET(model.size());
  ASSERT_EQ(tokenizer_at % 4096, 0u);
  ASSERT_GE(tokenizer_at, model.size());
  std::vector<unsigned char> image(ESP_FIRMWARE_RESERVED_BYTES + tokenizer_at + tokenizer.size() + 8192, 0xFF);
  std::copy(model.begin(), model.end(), image.begin() + ESP_FIRMWARE_RESERVED_BYTES);
  std::copy(tokenizer.begin(), tokenizer.end(), image.begin() + ESP_FIRMWARE_RESERVED_BYTES + tokenizer_at);
  const std::string path = test::temp_dir() + "/flash.bin";
  test::write_file(path, image);
  FlashImage flash{::open(path.c_str(), O_RDONLY), ESP_FIRMWARE_RESERVED_BYTES};
  ASSERT_GE(flash.fd, 0);
  esp_model_partition part = {flash_read, &flash,
                              static_cast<std::uint32_t>(image.size() - ESP_FIRMWARE_RESERVED_BYTES),
                              static_cast<std::uint32_t>(model.size()), static_cast<std::uint32_t>(tokenizer.size())};
  pocketlm_config config;
  esp_config(&config);
  esp_partition_file model_file, tokenizer_file;
  char message[160];
  ASSERT_EQ(esp_partition_storages(&part, &model_file, &tokenizer_file, &config, message, sizeof message), POCKETLM_OK)
      << message;
  // The same tokens as the two files read from memory.
  pocketlm_config from_memory;
  pocketlm_config_defaults(&from_memory);
  from_memory.model = {memory_read, const_cast<unsigned char*>(model.data()), model.size(), "memory:model"};
  from_memory.tokenizer = {memory_read, const_cast<unsigned char*>(tokenizer.data()), tokenizer.size(),
                           "memory:tokenizer"};
  EXPECT_EQ(greedy_tokens(config), greedy_tokens(from_memory));

  unsigned char byte;
  EXPECT_EQ(esp_file_read(&model_file, model.size(), &byte, 1), -1);  // past the model
  ASSERT_EQ(esp_file_read(&tokenizer_file, 0, &byte, 1), 0);          // the tokenizer's first byte
  EXPECT_EQ(byte, tokenizer[0]);
  EXPECT_EQ(esp_file_read(&tokenizer_file, tokenizer.size(), &byte, 1), -1);  // past the tokenizer
  part.tokenizer_bytes = static_cast<std::uint32_t>(part.partition_bytes - tokenizer_at + 1);
  EXPECT_EQ(esp_partition_storages(&part, &model_file, &tokenizer_file, &config, message, sizeof message),
            POCKETLM_INVALID_ARGUMENT);
  EXPECT_NE(std::string(message).find("ends past the model partition"), std::string::npos) << message;
  part.tokenizer_bytes = 0;
  EXPECT_EQ(esp_partition_storages(&part, &model_file, &tokenizer_file, &config, message, sizeof message),
            POCKETLM_INVALID_ARGUMENT);
  EXPECT_NE(std::string(message).find("POCKETLM_TOKENIZER_BYTES = 0"), std::string::npos) << message;
  part.model_bytes = 0;
  EXPECT_EQ(esp_partition_storages(&part, &model_file, &tokenizer_file, &config, message, sizeof message),
            POCKETLM_INVALID_ARGUMENT);
  EXPECT_NE(std::string(message).find("POCKETLM_MODEL_BYTES = 0"), std::string::npos) << message;
  EXPECT_EQ(esp_tier_caps(0, 1u << 11, 1u << 10, 1u << 2), (1u << 11) | (1u << 2));
  EXPECT_EQ(esp_tier_caps(1, 1u << 11, 1u << 10, 1u << 2), (1u << 10) | (1u << 2));
  ::close(flash.fd);
}

TEST(EspPort, ConfigIsTheEsp32s3Profile) {
  const nlohmann::json p = profile("esp32s3");
  pocketlm_config config;
  esp_config(&config);
  ASSERT_EQ(config.ram_tier_count, 2);
  for (int t = 0; t < 2; ++t) {
    EXPECT_EQ(config.ram_tiers[t].name, p["tiers"][t]["name"].get<std::string>());
    EXPECT_EQ(config.ram_tiers[t].capacity, p["tiers"][t]["capacity"].get<std::uint64_t>());
  }
  EXPECT_EQ(config.storage_capacity, p["tiers"][2]["capacity"].get<std::uint64_t>());
  EXPECT_EQ(config.storage_reserved, p["tiers"][2]["reserved_bytes"].get<std::uint64_t>());
  EXPECT_EQ(config.kernels, p["kernels"].get<std::string>());
}

// The firmware plans with what its heaps have at run time: each tier its heap's largest free
// block less the heap's slack, the sram tier also less the bounce buffer esp_partition_read
// mallocs there to read into PSRAM; a tier left with nothing is refused (0 is unbounded).
TEST(EspPort, TierCapacitiesAreTheHeapsLessTheFlashBounceBuffer) {
  EXPECT_EQ(ESP_FLASH_BOUNCE_BYTES, 16384u);  // esp_flash_read's largest chunk
  EXPECT_EQ(esp_tier_capacity(300000, ESP_FLASH_BOUNCE_BYTES), (300000u - 16384 - ESP_HEAP_SLACK_BYTES) / 16 * 16);
  EXPECT_EQ(esp_tier_capacity(300001, 0), (300001u - ESP_HEAP_SLACK_BYTES) / 16 * 16);
  EXPECT_EQ(esp_tier_capacity(16384 + ESP_HEAP_SLACK_BYTES + 31, 16384), 16u);
  EXPECT_EQ(esp_tier_capacity(16384 + ESP_HEAP_SLACK_BYTES + 15, 16384), 0u);
  EXPECT_EQ(esp_tier_capacity(100, 16384), 0u);

  // The shipped model planned on the profile's tiers puts `used` bytes in SRAM. With a heap
  // block of used + 8000 bytes it would fit there again, but not with the bounce buffer kept
  // free: the plan moves bytes to PSRAM and leaves that much of the block.
  const std::vector<unsigned char> model = test::read_file(kModel);
  std::vector<unsigned char> memory(pocketlm_session_bytes());
  pocketlm_session* s = nullptr;
  ASSERT_EQ(pocketlm_create(memory.data(), memory.size(), &s), POCKETLM_OK);
  pocketlm_config config;
  esp_config(&config);
  config.model = {memory_read, const_cast<unsigned char*>(model.data()), model.size(), "memory:model"};
  pocketlm_memory_plan plan = {sizeof plan};
  ASSERT_EQ(pocketlm_plan(s, &config, &plan), POCKETLM_OK) << pocketlm_last_error(s);
  const std::uint64_t used = plan.tiers[0].bytes;
  ASSERT_GT(used, 100000u);
  const std::size_t largest_free[2] = {static_cast<std::size_t>(used) + 8000, 8000000};
  char message[200];
  ASSERT_EQ(esp_tier_capacities(&config, largest_free, message, sizeof message), POCKETLM_OK) << message;
  EXPECT_EQ(config.ram_tiers[0].capacity, esp_tier_capacity(largest_free[0], ESP_FLASH_BOUNCE_BYTES));
  EXPECT_EQ(config.ram_tiers[1].capacity, esp_tier_capacity(largest_free[1], 0));
  ASSERT_EQ(pocketlm_plan(s, &config, &plan), POCKETLM_OK) << pocketlm_last_error(s);
  EXPECT_LT(plan.tiers[0].bytes, used);
  EXPECT_GE(largest_free[0] - plan.tiers[0].bytes, ESP_FLASH_BOUNCE_BYTES + ESP_HEAP_SLACK_BYTES);
  EXPECT_LE(plan.tiers[1].bytes, largest_free[1] - ESP_HEAP_SLACK_BYTES);
  pocketlm_close(s);

  const std::size_t no_sram[2] = {ESP_FLASH_BOUNCE_BYTES + 100, 8000000};
  EXPECT_EQ(esp_tier_capacities(&config, no_sram, message, sizeof message), POCKETLM_OUT_OF_MEMORY);
  EXPECT_NE(std::string(message).find("tier sram: its heap's largest free block, 16484 bytes, leaves no room"),
            std::string::npos)
      << message;
}

struct Partition {
  std::string name, type, subtype;
  std::uint64_t offset = 0, size = 0;
};

std::vector<Partition> read_partitions(const std::string& path) {
  std::vector<Partition> out;
  std::istringstream in(test::read_text(path));
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f;
    std::string field;
    std::istringstream cells(line);
    while (std::getline(cells, field, ',')) {
      const std::size_t b = field.find_first_not_of(" \t"), e = field.find_last_not_of(" \t");
      f.push_back(b == std::string::npos ? "" : field.substr(b, e - b + 1));
    }
    EXPECT_GE(f.size(), 5u) << line;
    if (f.size() < 5) continue;
    out.push_back({f[0], f[1], f[2], std::stoull(f[3], nullptr, 0), std::stoull(f[4], nullptr, 0)});
  }
  return out;
}

TEST(EspPort, PartitionTableAgreesWithTheProfileAndHoldsTheModel) {
  const nlohmann::json flash = profile("esp32s3")["tiers"][2];
  const std::uint64_t capacity = flash["capacity"].get<std::uint64_t>();
  const std::uint64_t reserved = flash["reserved_bytes"].get<std::uint64_t>();
  const std::vector<Partition> parts = read_partitions(kSource + "/src/ports/esp_idf/partitions.csv");
  ASSERT_EQ(parts.size(), 4u);
  std::uint64_t end = 0x9000;  // the bootloader and the table (at 0x8000, 4 KiB) come first
  for (const Partition& p : parts) {
    SCOPED_TRACE(p.name);
    EXPECT_EQ(p.offset, end) << "partitions must follow each other without a gap";
    EXPECT_EQ(p.offset % (p.type == "app" ? 0x10000 : 0x1000), 0u);
    end = p.offset + p.size;
  }
  const Partition& app = parts[2];
  const Partition& model = parts[3];
  EXPECT_EQ(app.type, "app");
  EXPECT_EQ(model.name, "model");
  EXPECT_EQ(model.subtype, "0x40");  // main.c finds it by this subtype
  EXPECT_EQ(app.offset + app.size, reserved) << "the firmware's part must be the profile's reserved_bytes";
  EXPECT_EQ(model.offset, reserved);
  EXPECT_EQ(model.offset + model.size, capacity) << "the model partition ends at the end of the flash";
  EXPECT_EQ(static_cast<std::uint64_t>(ESP_FIRMWARE_RESERVED_BYTES), reserved);

  // The ESP32-shaped PLE model (its table in IQ4_XS) and Llama 2's tokenizer.bin fit the model
  // partition, with the slack the table states.
  POCKETLM_REQUIRE_FILES("models/tokenizer.bin");
  const std::string file = test::golden_model_path("esp32-ple_iq4xs.gguf");
  if (file.empty()) GTEST_SKIP() << "esp32-ple_iq4xs.gguf is not available (the pocketlm binary makes it)";
  const std::uint64_t model_bytes = test::read_file(file).size();
  const std::uint64_t tokenizer_bytes = test::read_file(test::model_path("tokenizer.bin")).size();
  const std::uint64_t bytes = ESP_TOKENIZER_OFFSET(model_bytes) + tokenizer_bytes;
  EXPECT_LE(bytes, model.size);
  const std::string table = test::read_text(kSource + "/src/ports/esp_idf/partitions.csv");
  EXPECT_NE(table.find("(" + std::to_string(model_bytes) + " bytes) and, at the next 4 KiB boundary, Llama 2's "
                       "tokenizer.bin (" + std::to_string(tokenizer_bytes) + " bytes) leave " +
                       std::to_string(model.size - bytes)),
            std::string::npos)
      << "partitions.csv's comment must state the model's size and the slack";
}

}  // namespace
}  // namespace pocketlm
